/**
 * The campaign list as every client pages it (GET /api/campaigns, the console's list, `campaign
 * list`): a search by name or id, a filter by state and by sending number, a sort, and a page of
 * what matches. The query's rules live here once; each client only names the fields its own way.
 */
import { CAMPAIGN_STATES, type CampaignState } from 'convo-contract';
import { z } from 'zod/v4';

import type { RunnerContext } from '../context';
import { FieldError } from '../errors';
import { storedCampaignName } from './names';
import { detailsOf, type CampaignDetail } from './store';

/** `created`: newest first; `state`: in the states' life-cycle order (draft … failed), newest first within one. */
export const CAMPAIGN_SORTS = ['created', 'state'] as const;
const MAX_CAMPAIGNS_PER_PAGE = 500;

const STATES_RULE = `must be one or more of ${CAMPAIGN_STATES.join(', ')} (separated by commas)`;
const isState = (text: string): text is CampaignState => (CAMPAIGN_STATES as readonly string[]).includes(text);
const states = z
	.string()
	.transform((text, context) => {
		const parts = text
			.split(',')
			.map((part) => part.trim())
			.filter(Boolean);
		if (parts.every(isState)) return parts;
		context.addIssue({ code: 'custom', message: STATES_RULE });
		return z.NEVER;
	})
	.optional();

/** The list's query as the API takes it (strings from a query string, numbers coerced). */
export const campaignListQuery = z.object({
	/** Campaigns to skip, then the most to answer: a page of the list. */
	limit: z.coerce
		.number({ error: 'must be a whole number' })
		.int({ error: 'must be a whole number' })
		.min(1, { error: 'must be at least 1' })
		.max(MAX_CAMPAIGNS_PER_PAGE, { error: `must be at most ${MAX_CAMPAIGNS_PER_PAGE}` })
		.default(50),
	offset: z.coerce
		.number({ error: 'must be a whole number' })
		.int({ error: 'must be a whole number' })
		.min(0, { error: 'must be 0 or more' })
		.default(0),
	/** Part of the name or the id, any case. */
	search: z.string().max(200, { error: 'must be at most 200 characters' }).optional(),
	/** Only campaigns in this state (several separated by commas). */
	state: states,
	/** Only campaigns sending from this number (its digits compared: the + and spaces do not matter). */
	from: z.string().max(40, { error: 'must be at most 40 characters' }).optional(),
	sort: z.enum(CAMPAIGN_SORTS, { error: `must be one of ${CAMPAIGN_SORTS.join(', ')}` }).default('created'),
});
export type CampaignListQuery = z.output<typeof campaignListQuery>;

/** A page of campaigns and how many match the query in all. */
export interface CampaignPage {
	items: CampaignDetail[];
	total: number;
	limit: number;
	offset: number;
}

/**
 * The query checked, each error naming the field as the client calls it (`names`: the API's own
 * names when absent) and saying its rule.
 */
export function checkedListQuery(
	input: Record<string, unknown>,
	names: Partial<Record<keyof CampaignListQuery, string>> = {},
): CampaignListQuery {
	const parsed = campaignListQuery.safeParse(input);
	if (parsed.success) return parsed.data;
	const issue = parsed.error.issues[0];
	const key = String(issue.path[0]) as keyof CampaignListQuery;
	const field = names[key] ?? key;
	throw new FieldError(`${field} ${issue.message}`, field);
}

const digits = (phone: string) => phone.replace(/\D/g, '');
const STATE_ORDER = new Map(CAMPAIGN_STATES.map((state, index) => [state, index]));

/** What a campaign is matched and sorted on, read for every listed campaign only when the query needs it. */
interface Summary {
	id: string;
	name: string;
	state: CampaignState;
	from: string;
}

/** Summaries of `ids` (newest first), a bounded batch of reads at a time; a campaign gone meanwhile is left out. */
async function summaries(context: RunnerContext, ids: string[]): Promise<Summary[]> {
	const { redis, keys } = context;
	const homes = await redis.hgetall(keys.homes);
	const found: Summary[] = [];
	for (let start = 0; start < ids.length; start += MAX_CAMPAIGNS_PER_PAGE) {
		const batch = ids.slice(start, start + MAX_CAMPAIGNS_PER_PAGE);
		const read = await Promise.all(
			batch.map(async (id) => {
				const from = homes[id];
				if (from === undefined) return undefined;
				const [name, state, source, createdAt] = await redis.hmget(
					keys.campaign(from, id),
					'name',
					'state',
					'source',
					'created_at',
				);
				if (state === null) return undefined;
				// A campaign stored before names were kept is matched on the name the list shows it with.
				const hash = { name: name ?? '', source: source ?? '' };
				return { id, name: storedCampaignName(hash, Number(createdAt)), state: state as CampaignState, from };
			}),
		);
		for (const summary of read) if (summary) found.push(summary);
	}
	return found;
}

/**
 * A page of the campaigns the query matches. Without a search, filter or sort of its own the page is
 * read straight from the list (newest first); otherwise every listed campaign's name, state and
 * number are read to match them, and only the page's campaigns are read in full.
 */
export async function pageCampaigns(context: RunnerContext, query: CampaignListQuery): Promise<CampaignPage> {
	const { redis, keys } = context;
	const { limit, offset } = query;
	const search = query.search?.trim().toLowerCase() ?? '';
	const from = query.from === undefined ? '' : digits(query.from);
	const wanted = query.state && query.state.length > 0 ? new Set(query.state) : undefined;
	if (search === '' && from === '' && !wanted && query.sort === 'created') {
		const ids = await redis.zrevrange(keys.campaigns, offset, offset + limit - 1);
		return { items: await detailsOf(context, ids), total: await redis.zcard(keys.campaigns), limit, offset };
	}
	const listed = await summaries(context, await redis.zrevrange(keys.campaigns, 0, -1));
	const matching = listed.filter(
		(c) =>
			(search === '' || c.id.toLowerCase().includes(search) || c.name.toLowerCase().includes(search)) &&
			(from === '' || digits(c.from) === from) &&
			(!wanted || wanted.has(c.state)),
	);
	// Array sort is stable: within a state the list's newest-first order stays.
	if (query.sort === 'state')
		matching.sort((a, b) => (STATE_ORDER.get(a.state) ?? 0) - (STATE_ORDER.get(b.state) ?? 0));
	const page = matching.slice(offset, offset + limit).map((c) => c.id);
	return { items: await detailsOf(context, page), total: matching.length, limit, offset };
}
