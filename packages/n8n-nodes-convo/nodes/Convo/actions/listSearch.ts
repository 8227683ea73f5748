import type { IDataObject, ILoadOptionsFunctions, INodeListSearchItems, INodeListSearchResult } from 'n8n-workflow';

import { RUNNER_ROUTES } from '../../shared';

import { runnerJson } from '../runnerTransport';

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

const count = (counts: unknown, outcome: string) => Number((counts as IDataObject | undefined)?.[outcome] ?? 0);

/** "120 of 300 sent": what a person looks for after the name and state. */
function campaignProgress(campaign: IDataObject): string {
	const counts = (campaign.counts ?? {}) as IDataObject;
	const total = Object.values(counts).reduce<number>((sum, value) => sum + Number(value ?? 0), 0);
	return `${count(counts, 'sent')} of ${total} sent`;
}

/** "March promo (running) · cmwt6… · 120 of 300 sent"; a runner that keeps no names: "cmwt6… · running · 120 of 300 sent". */
function campaignLabel(campaign: IDataObject): string {
	const id = String(campaign.id);
	const state = String(campaign.state ?? 'unknown');
	if (typeof campaign.name === 'string' && campaign.name !== '') return `${campaign.name} (${state}) · ${id} · ${campaignProgress(campaign)}`;
	return `${id} · ${state} · ${campaignProgress(campaign)}`;
}

/**
 * Campaign ID → From List: the runner's campaigns, newest first, a page at a time (the offset is the
 * pagination token). Each shows its name and state, its id and how much was sent.
 * The runner cannot search, so with a filter the pages are read in the API's largest size until a
 * dropdown page of matches is found (or FILTER_READS pages were read): an old campaign is found by
 * its id without scrolling through empty pages.
 */
export async function searchCampaigns(this: ILoadOptionsFunctions, filter?: string, paginationToken?: string): Promise<INodeListSearchResult> {
	const filtering = (filter ?? '').trim() !== '';
	let offset = Math.max(0, Number(paginationToken ?? 0) || 0);
	const results: INodeListSearchItems[] = [];
	for (let reads = 0; reads < (filtering ? FILTER_READS : 1); reads++) {
		const page = await runnerJson.call(this, { ...RUNNER_ROUTES.listCampaigns, qs: { limit: filtering ? LIST_PAGE_MAX : CAMPAIGNS_PER_PAGE, offset } });
		const items = (Array.isArray(page.items) ? page.items : []) as IDataObject[];
		for (const campaign of items) {
			if (!matches(filter, campaign.id, campaign.name, campaign.state)) continue;
			results.push({ name: campaignLabel(campaign), value: String(campaign.id) });
		}
		offset += items.length;
		if (items.length === 0 || offset >= Number(page.total ?? 0)) return { results };
		if (results.length >= CAMPAIGNS_PER_PAGE) break;
	}
	return { results, paginationToken: String(offset) };
}

/** Run ID → From List: the runner's latest reindex runs (it answers them in one list), with state and collection. */
export async function searchReindexRuns(this: ILoadOptionsFunctions, filter?: string): Promise<INodeListSearchResult> {
	const answer = await runnerJson.call(this, { ...RUNNER_ROUTES.listReindexRuns });
	const runs = (Array.isArray(answer.runs) ? answer.runs : []) as IDataObject[];
	return {
		results: runs
			.filter((run) => matches(filter, run.id, run.state, run.collection))
			.map((run) => ({ name: `${String(run.id)} · ${String(run.state ?? 'unknown')} · collection ${String(run.collection ?? '?')}`, value: String(run.id) })),
	};
}
