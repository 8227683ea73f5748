/**
 * Creating a campaign: the settings are checked, the recipient source is read as a stream, each row
 * is checked (a bad row is kept as `rejected` with its line and reason, never sent), and the
 * audience is snapshotted into Redis. Nothing becomes visible until the whole source was read: a
 * source that cannot be read to its end creates nothing. A draft (draft.ts) is snapshotted the
 * same way, then grows by chunks checked by the same RowChecker.
 */
import { formatOf, readRecords, SourceError, type SourceRecord } from '../source';
import { PENDING_RECORD, counterField, encodeRecord, OUTCOMES } from '../ledger';
import { UserError, type RunnerContext } from '../context';
import { luaScript } from '../redis';
import { EMIT_SCRIPT } from '../webhooks/events';
import { checkRow, encodeRecipient, type CampaignBasics } from './schema';
import type { CampaignState } from './store';

const WRITE_BATCH = 1000;
/** How many rejected rows the create answer lists (the report has them all). */
const REJECTIONS_SHOWN = 20;

export interface Snapshot {
	id: string;
	state: CampaignState;
	total: number;
	accepted: number;
	rejected: number;
	rejections: Array<{ line: number; phone: string; reason: string }>;
}

/** Field/value pairs of the hashes a batch of rows writes. */
export interface StagedRows {
	recipients: string[];
	ledger: string[];
	/** phone -> line of each accepted row: a draft's index of the phones it holds. */
	phones: string[];
}

const nothingStaged = (): StagedRows => ({ recipients: [], ledger: [], phones: [] });

/**
 * Checks rows one by one (schema.ts's checkRow: phone, buttons, variables, a phone twice) and
 * stages what each writes, at consecutive indexes from `firstIndex`. `seen` holds the phones
 * already in the campaign (phone -> first line): the rows before them in this source, and, for a
 * draft's chunk, those of its earlier chunks, read from its phone index.
 */
export class RowChecker {
	total = 0;
	accepted = 0;
	rejected = 0;
	lastLine = 0;
	anyPhoneField = false;
	readonly rejections: Snapshot['rejections'] = [];
	private staged = nothingStaged();

	constructor(
		private readonly firstIndex: number,
		private readonly seen: Map<string, number>,
		private readonly rejectionsShown: number,
	) {}

	check(record: SourceRecord): void {
		const index = String(this.firstIndex + this.total++);
		this.lastLine = Math.max(this.lastLine, record.line);
		let verdict;
		if (record.ok) {
			if (record.fields.phone !== undefined) this.anyPhoneField = true;
			verdict = checkRow(record.line, record.fields, this.seen, record.columns);
		} else {
			verdict = { ok: false as const, line: record.line, phone: '', reason: record.reason };
		}
		if (verdict.ok) {
			this.accepted++;
			this.staged.recipients.push(index, encodeRecipient(verdict.recipient));
			this.staged.ledger.push(index, PENDING_RECORD);
			this.staged.phones.push(verdict.recipient.phone, String(verdict.recipient.line));
		} else {
			this.rejected++;
			if (this.rejections.length < this.rejectionsShown) this.rejections.push({ line: verdict.line, phone: verdict.phone, reason: verdict.reason });
			this.staged.recipients.push(index, encodeRecipient({ line: verdict.line, phone: verdict.phone }));
			this.staged.ledger.push(index, encodeRecord({ outcome: 'rejected', attempts: 0, ref: '', error: `line ${verdict.line}: ${verdict.reason}` }));
		}
	}

	/** Rows staged since the last take(). */
	get stagedRows(): number {
		return this.staged.ledger.length / 2;
	}

	take(): StagedRows {
		const staged = this.staged;
		this.staged = nothingStaged();
		return staged;
	}
}

export interface SnapshotInput extends CampaignBasics {
	id: string;
	state: CampaignState;
	startAt?: number;
	scheduleId?: string;
	/** Records already at hand (an upload, inline rows); otherwise `source` is read. */
	records?: AsyncIterable<SourceRecord>;
	/** A draft: the state `start` moves it to, and when it is removed unless started. */
	draft?: { startsAs: 'running' | 'scheduled'; expiresAt: number };
}

export async function snapshotCampaign(context: RunnerContext, input: SnapshotInput): Promise<Snapshot> {
	const { redis, keys } = context;
	const { id, draft } = input;
	const rows = new RowChecker(0, new Map(), REJECTIONS_SHOWN);
	const flush = async () => {
		const staged = rows.take();
		if (staged.ledger.length === 0) return;
		const batch = redis.pipeline().hset(keys.recipients(id), ...staged.recipients).hset(keys.ledger(id), ...staged.ledger);
		if (draft && staged.phones.length > 0) batch.hset(keys.phones(id), ...staged.phones);
		const results = await batch.exec();
		const failed = results?.find(([error]) => error);
		if (failed) throw failed[0];
	};

	try {
		const records = input.records ?? readRecords(input.source, formatOf(input.source, input.format));
		for await (const record of records) {
			rows.check(record);
			if (rows.stagedRows >= WRITE_BATCH) await flush();
		}
		await flush();
		// A draft may start empty: its rows come in chunks.
		if (rows.total === 0 && !draft) throw new SourceError(`${input.source} is empty: it holds no recipient`);
		if (rows.total > 0 && !rows.anyPhoneField) throw new SourceError(`${input.source} has no "phone" column or field: every recipient needs one (digits with country code)`);
	} catch (error) {
		await redis.del(keys.recipients(id), keys.ledger(id), keys.phones(id));
		if (error instanceof SourceError) throw new UserError(`Nothing was created: ${error.message}`);
		throw error;
	}

	const { total, accepted, rejected, rejections } = rows;
	const state: CampaignState = accepted === 0 && !draft ? 'completed' : input.state;
	const now = Date.now();
	const counters = Object.fromEntries(OUTCOMES.map((outcome) => [counterField(outcome), 0]));
	await redis.hset(keys.campaign(id), {
		...counters,
		[counterField('pending')]: accepted,
		[counterField('rejected')]: rejected,
		id,
		state,
		template_id: input.templateId,
		from: input.from,
		agent_id: input.agentId ?? '',
		rate: input.rate,
		source: input.source,
		schedule_id: input.scheduleId ?? '',
		start_at: input.startAt ?? '',
		created_at: now,
		finished_at: state === 'completed' ? now : '',
		total,
		cursor: 0,
		last_progress_at: now,
		failure_streak: 0,
		last_error: '',
		...(draft ? { start_state: draft.startsAs, expires_at: draft.expiresAt, last_line: rows.lastLine } : {}),
	});
	if (draft) {
		// Every key of a draft expires at the same instant; start (or cancel) makes them persist.
		const expiring = redis.pipeline();
		for (const key of [keys.campaign(id), keys.recipients(id), keys.ledger(id), keys.phones(id)]) expiring.pexpireat(key, draft.expiresAt);
		await expiring.zadd(keys.drafts, draft.expiresAt, id).exec();
	}
	await redis.zadd(keys.campaigns, now, id);
	await redis.sadd(keys.numbers, input.from);
	if (state === 'running') await redis.sadd(keys.running, id);
	if (state === 'completed') await emitBornFinished(context, id);
	return { id, state, total, accepted, rejected, rejections };
}

/** campaign.finished for a campaign that ended as it was created (nothing to send, or a skipped run). */
export async function emitBornFinished(context: RunnerContext, id: string): Promise<void> {
	const emit = luaScript(context.redis, 'convoEmit', EMIT_SCRIPT, 2);
	await emit([context.keys.campaign(id), context.keys.webhooks.outbox], [id, 'campaign.finished', Date.now()]);
}
