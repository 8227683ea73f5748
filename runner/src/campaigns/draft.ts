/**
 * Draft campaigns: created empty or with a first set of rows (create.ts with `draft`), filled in
 * chunks of at most RECIPIENTS_PER_CHUNK rows, then started. A client that cannot send 50,000 rows
 * in one request (an n8n execution) builds one campaign this way. Nothing is sent while a draft.
 *
 * - Each chunk's rows are checked by create.ts's RowChecker. A phone already in an earlier chunk is
 *   found in the draft's phone index (a Redis hash phone -> line), so duplicates are refused across
 *   chunks; line numbers continue from the last chunk unless the client says where a chunk starts.
 * - A chunk is written by one Lua script, all or nothing, only if the campaign is still a draft and
 *   no other chunk landed since its rows were checked (else it is checked again).
 * - Every key of a draft expires 24 h after its creation unless it is started (or cancelled); the
 *   feeder tick drops expired drafts from the campaign list.
 */
import { RECIPIENTS_PER_CHUNK } from 'convo-contract';
import type { RunnerContext } from '../context';
import { ConflictError, NotFoundError, UserError } from '../errors';
import { LimitError, fullMessage, release, reserve, tooManyRows } from '../limits';
import { addStartJob } from '../jobs';
import { IDEMPOTENCY_SECONDS } from '../keys';
import { redisScript } from '../redisScripts';
import { inlineRecords, type SourceRecord } from '../source';
import { phonesOf, phonesSeen, RowChecker, type Snapshot } from './create';
import { ZoneFinder } from '../audience/windows';
import { transition } from './state';
import { findCampaign, getCampaign, type CampaignState } from './store';
import { campaignNumber, forgetCampaign } from '../keyGroups';
import { suppressedNotes } from '../audience/suppression';

/** Drafts never started are removed this long after they were created. */
export const DRAFT_LIFETIME_MS = 24 * 3600 * 1000;

/** Checking a chunk again because another landed meanwhile: at most this many times. */
const CHUNK_TRIES = 5;

export interface ChunkAnswer {
	id: string;
	name: string;
	state: CampaignState;
	/** This chunk: every rejected row of it is listed. */
	added: Omit<Snapshot, 'id' | 'name' | 'state'>;
	/** The whole campaign so far. */
	total: number;
	accepted: number;
	rejected: number;
	suppressed: number;
}

function notADraft(id: string, state: string): ConflictError {
	return new ConflictError(`Campaign ${id} is ${state}; recipients can be added only while it is a draft`);
}

/** Row i of the chunk gets line `firstLine + i`; by default the line after the last one added. */
/** `claim`: the Idempotency-Key the chunk is added under (core/campaigns.ts once); its answer is kept with the rows. */
export async function addRecipients(
	context: RunnerContext,
	id: string,
	rows: unknown[],
	firstLine?: number,
	claim?: { slot: string; token: string },
): Promise<ChunkAnswer> {
	const { redis, keys } = context;
	if (rows.length > RECIPIENTS_PER_CHUNK)
		throw new UserError(`recipients has ${rows.length} rows; at most ${RECIPIENTS_PER_CHUNK} per chunk`);
	if (firstLine !== undefined && (!Number.isInteger(firstLine) || firstLine < 1))
		throw new UserError('first_line must be a whole number from 1');
	const apply = redisScript(redis, 'applyChunk');
	const records: SourceRecord[] = [];
	for await (const record of inlineRecords(rows)) records.push(record);
	// The phones of the chunk that may already be in the draft (read again on each try).
	const phones = phonesOf(records);

	for (let attempt = 1; attempt <= CHUNK_TRIES; attempt++) {
		const campaign = await getCampaign(context, id);
		if (campaign.state !== 'draft') throw notADraft(id, campaign.state);
		// The script applies the chunk only to the total checked here, so the cap holds with chunks at once.
		const max = context.config.RUNNER_MAX_RECIPIENTS;
		if (campaign.total + rows.length > max)
			throw new LimitError(
				413,
				`${tooManyRows(max)}: the draft has ${campaign.total} and this chunk ${rows.length}`,
				'recipients',
			);
		const { from } = campaign;
		const lastLine = Number(await redis.hget(keys.campaign(from, id), 'last_line'));
		const base = firstLine ?? lastLine + 1;
		const seen = phonesSeen(phones, phones.length > 0 ? await redis.hmget(keys.phones(from, id), ...phones) : []);

		// A windowed draft's chunk adds to its zones' lists, numbered on from the chunks before it.
		const zones = campaign.window && new ZoneFinder(campaign.window, Date.now() + campaign.clockOffset);
		const suppressed = campaign.transactional ? undefined : await suppressedNotes(context, phones);
		const checker = new RowChecker(campaign.total, RECIPIENTS_PER_CHUNK, zones, campaign.zones, campaign.abTest);
		for (const record of records) checker.check({ ...record, line: base + record.line - 1 }, seen, suppressed);
		const staged = checker.take(true);
		// The campaign after this chunk, as the script leaves it (it applies only if no other chunk landed).
		const total = campaign.total + checker.total;
		const rejected = campaign.counts.rejected + checker.rejected;
		const suppressedRows = campaign.counts.suppressed + checker.suppressed;
		const result: ChunkAnswer = {
			id,
			name: campaign.name,
			state: 'draft',
			added: {
				total: checker.total,
				accepted: checker.accepted,
				rejected: checker.rejected,
				suppressed: checker.suppressed,
				rejections: checker.rejections,
			},
			total,
			accepted: total - rejected - suppressedRows,
			rejected,
			suppressed: suppressedRows,
		};
		const answer = await apply(
			[
				keys.campaign(from, id),
				keys.recipients(from, id),
				keys.ledger(from, id),
				keys.phones(from, id),
				claim?.slot ?? keys.campaign(from, id),
				keys.zoneIndexes(from, id),
			],
			[
				campaign.total,
				checker.total,
				checker.accepted,
				checker.rejected,
				checker.lastLine,
				JSON.stringify(staged.recipients),
				JSON.stringify(staged.ledger),
				JSON.stringify(staged.phones),
				claim?.token ?? '',
				JSON.stringify(result),
				IDEMPOTENCY_SECONDS,
				JSON.stringify(staged.zones),
				checker.zones ? JSON.stringify(checker.zones.table) : '',
				checker.suppressed,
				campaign.abTest ? JSON.stringify(checker.variantCounts) : '',
			],
		);
		if (answer === 'missing') throw new NotFoundError(`No campaign with id ${id}`);
		if (answer === 'not_draft') throw notADraft(id, (await getCampaign(context, id)).state);
		if (answer === 'lease_lost')
			throw new ConflictError(
				'this request took longer than its Idempotency-Key lease and another request with the key runs now; ' +
					'this chunk was not added',
			);
		if (answer !== 'ok') continue;

		context.log.info(
			{ campaign: id, rows: checker.total, accepted: checker.accepted, rejected: checker.rejected },
			'draft campaign: recipients added',
		);
		return result;
	}
	throw new ConflictError(
		`other chunks were being added to campaign ${id} at the same time; send a draft's chunks one after the other`,
	);
}

/**
 * Starts a draft: `running`, or `scheduled` when it was created with a start time; with no
 * accepted recipient it completes at once. A campaign that is no longer a draft is left as it is,
 * so a retried start is harmless. Returns the campaign's state afterwards.
 */
export async function startDraft(context: RunnerContext, id: string): Promise<CampaignState> {
	const campaign = await getCampaign(context, id);
	if (campaign.state !== 'draft') return campaign.state;
	const startsAs =
		(await context.redis.hget(context.keys.campaign(campaign.from, id), 'start_state')) === 'scheduled'
			? 'scheduled'
			: 'running';
	const now = Date.now();
	if (campaign.counts.pending === 0) {
		await transition(
			context,
			id,
			['draft'],
			'completed',
			{ finished_at: now, last_progress_at: now },
			{ event: 'campaign.finished' },
		);
	} else {
		// The start job first: if this process dies before the state changes, the job finds a draft and does nothing.
		if (startsAs === 'scheduled') await addStartJob(context, { campaign: id, dueAt: campaign.startAt ?? now });
		const result = await transition(context, id, ['draft'], startsAs, {
			cursor: 0,
			last_progress_at: now,
			running_since: now,
		});
		if (result.changed)
			context.log.info(
				{ campaign: id, state: startsAs, recipients: campaign.counts.pending },
				'draft campaign started',
			);
	}
	return (await getCampaign(context, id)).state;
}

/**
 * Takes a place among the open drafts (at most RUNNER_MAX_DRAFTS) for a draft about to be created;
 * drafts already started or cancelled (they stay in the set until their 24 h are up) are dropped
 * from it when it looks full. 409 naming the setting when it is full.
 */
export async function takeDraftPlace(context: RunnerContext, id: string, expiresAt: number): Promise<void> {
	const { redis, keys } = context;
	const max = context.config.RUNNER_MAX_DRAFTS;
	if ((await reserve(context, keys.drafts, max, id, expiresAt)) === undefined) return;
	const members = await redis.zrange(keys.drafts, 0, -1);
	const states = await Promise.all(members.map(async (member) => (await findCampaign(context, member))?.state ?? null));
	const gone = members.filter((_, i) => states[i] !== null && states[i] !== 'draft');
	if (gone.length > 0) await redis.zrem(keys.drafts, ...gone);
	const full = await reserve(context, keys.drafts, max, id, expiresAt);
	if (full !== undefined)
		throw new LimitError(409, fullMessage('drafts not yet started', full, max, 'RUNNER_MAX_DRAFTS'));
}

export async function giveBackDraftPlace(context: RunnerContext, id: string): Promise<void> {
	await release(context, context.keys.drafts, id);
}

/**
 * The feeder tick's cleanup: drafts whose 24 h are up leave the lists (Redis has expired their
 * keys). Their group first, then the global lists: a process that dies between leaves the id in
 * `drafts`, and the next tick finishes it.
 */
export async function dropExpiredDrafts(context: RunnerContext): Promise<number> {
	const { redis, keys } = context;
	const drop = redisScript(redis, 'dropDraft');
	let dropped = 0;
	for (const id of await redis.zrangebyscore(keys.drafts, '-inf', Date.now(), 'LIMIT', 0, 100)) {
		const from = await campaignNumber(context, id);
		const gone =
			from === undefined ||
			Number(
				await drop(
					[
						keys.campaign(from, id),
						keys.recipients(from, id),
						keys.ledger(from, id),
						keys.phones(from, id),
						keys.unlisted(from),
					],
					[id],
				),
			) === 1;
		if (gone) {
			await forgetCampaign(context, id);
			dropped++;
		} else {
			await redis.zrem(keys.drafts, id);
		}
	}
	if (dropped > 0) context.log.info({ dropped }, 'draft campaigns never started were removed after 24 h');
	return dropped;
}
