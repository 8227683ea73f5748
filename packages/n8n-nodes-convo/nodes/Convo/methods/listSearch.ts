import type { IDataObject, ILoadOptionsFunctions, INodeListSearchItems, INodeListSearchResult } from 'n8n-workflow';

import { RUNNER_ROUTES } from '../../shared/runnerRoutes';

import { runnerJson } from '../transport/runner';

/** Campaigns asked for per page of the From List dropdown (the runner pages its list, newest first). */
const CAMPAIGNS_PER_PAGE = 50;
/** The most campaigns GET /api/campaigns answers at once, read per request while filtering. */
const LIST_PAGE_MAX = 500;
/** Requests one filtered search makes at most before it hands the editor a pagination token. */
const FILTER_READS = 4;

/** The runner has no search parameter: the typed filter is matched here, on what the list shows. */
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
 * pagination token). Each shows its name and its id; typing also matches its state.
 * The runner cannot search, so with a filter the pages are read in the API's largest size until a
 * dropdown page of matches is found (or FILTER_READS pages were read): an old campaign is found by
 * its id without scrolling through empty pages.
 */
export async function searchCampaigns(
	this: ILoadOptionsFunctions,
	filter?: string,
	paginationToken?: string,
): Promise<INodeListSearchResult> {
	const filtering = (filter ?? '').trim() !== '';
	let offset = Math.max(0, Number(paginationToken ?? 0) || 0);
	const results: INodeListSearchItems[] = [];
	for (let reads = 0; reads < (filtering ? FILTER_READS : 1); reads++) {
		const page = await runnerJson.call(this, {
			...RUNNER_ROUTES.listCampaigns,
			qs: { limit: filtering ? LIST_PAGE_MAX : CAMPAIGNS_PER_PAGE, offset },
		});
		const items = (Array.isArray(page.items) ? page.items : []) as IDataObject[];
		for (const campaign of items) {
			if (!matches(filter, campaign.id, campaign.name, campaign.state)) continue;
			results.push({
				name: listLabel(typeof campaign.name === 'string' ? campaign.name : '', String(campaign.id)),
				value: String(campaign.id),
			});
		}
		offset += items.length;
		if (items.length === 0 || offset >= Number(page.total ?? 0)) return { results };
		if (results.length >= CAMPAIGNS_PER_PAGE) break;
	}
	return { results, paginationToken: String(offset) };
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
