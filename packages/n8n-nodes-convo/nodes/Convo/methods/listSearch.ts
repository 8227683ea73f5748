import type { IDataObject, ILoadOptionsFunctions, INodeListSearchResult } from 'n8n-workflow';

import { CAMPAIGN_STATES } from '../../shared/runnerApi/campaign';
import { RUNNER_ROUTES } from '../../shared/runnerRoutes';

import { runnerJson } from '../transport/runner';

/** Campaigns asked for per page of the From List dropdown (the runner pages its list, newest first). */
const CAMPAIGNS_PER_PAGE = 50;
/** The most characters the runner's campaign search takes (a longer one is refused). */
const SEARCH_MAX = 200;

/** The run list's filter, matched here on what the list shows (the runner answers its runs in one list). */
function matches(filter: string | undefined, ...texts: unknown[]): boolean {
	const wanted = (filter ?? '').trim().toLowerCase();
	return wanted === '' || texts.some((text) => typeof text === 'string' && text.toLowerCase().includes(wanted));
}

/**
 * Characters of a name shown before its id. n8n's dropdown shows one line per item and cuts what
 * does not fit at its end, so a long name is shortened here and the id always stays readable.
 */
export const LIST_NAME_MAX = 40;

/**
 * One dropdown line: the name and the id, as n8n's own nodes show them ("name (#id)"); also what
 * the editor keeps as the field's cached name, so nothing in it that goes stale (state, counts).
 */
function listLabel(name: string, id: string): string {
	const text = name.replace(/\s+/g, ' ').trim();
	if (text === '') return id;
	const shown = text.length <= LIST_NAME_MAX ? text : `${text.slice(0, LIST_NAME_MAX - 1).trimEnd()}…`;
	return `${shown} (${id})`;
}

/**
 * Campaign ID → From List: the runner's campaigns, newest first, a page at a time (the offset is the
 * pagination token), each with its name and its id. What is typed goes to the runner's list as its
 * search (a part of the name or the id, any case), or as its state filter when it is a state's name
 * ("paused"): the runner filters, so an old campaign is found however long the list.
 */
export async function searchCampaigns(
	this: ILoadOptionsFunctions,
	filter?: string,
	paginationToken?: string,
): Promise<INodeListSearchResult> {
	const typed = (filter ?? '').trim().toLowerCase();
	const offset = Math.max(0, Number(paginationToken ?? 0) || 0);
	const narrowed =
		typed === ''
			? {}
			: (CAMPAIGN_STATES as readonly string[]).includes(typed)
				? { state: typed }
				: { search: typed.slice(0, SEARCH_MAX) };
	const page = await runnerJson.call(this, {
		...RUNNER_ROUTES.listCampaigns,
		qs: { limit: CAMPAIGNS_PER_PAGE, offset, ...narrowed },
	});
	const items = (Array.isArray(page.items) ? page.items : []) as IDataObject[];
	const results = items.map((campaign) => ({
		name: listLabel(typeof campaign.name === 'string' ? campaign.name : '', String(campaign.id)),
		value: String(campaign.id),
	}));
	const next = offset + items.length;
	return items.length > 0 && next < Number(page.total ?? 0) ? { results, paginationToken: String(next) } : { results };
}

/**
 * Run ID → From List: the runner's latest reindex runs (it answers them in one list). A run has no
 * name: the collection it fills stands for one; typing also matches its state.
 */
export async function searchReindexRuns(this: ILoadOptionsFunctions, filter?: string): Promise<INodeListSearchResult> {
	const answer = await runnerJson.call(this, { ...RUNNER_ROUTES.listReindexRuns });
	const runs = (Array.isArray(answer.runs) ? answer.runs : []) as IDataObject[];
	return {
		results: runs
			.filter((run) => matches(filter, run.id, run.state, run.collection))
			.map((run) => ({
				name: listLabel(run.collection === undefined ? '' : `Collection ${String(run.collection)}`, String(run.id)),
				value: String(run.id),
			})),
	};
}
