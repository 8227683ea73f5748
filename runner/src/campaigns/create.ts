/**
 * Creating a campaign: the settings are checked, the recipient source is read as a stream, each row
 * is checked (a bad row is kept as `rejected` with its line and reason, never sent), and the
 * audience is snapshotted into Redis. Nothing becomes visible until the whole source was read: a
 * source that cannot be read to its end creates nothing.
 */
import { formatOf, readRecords, SourceError, type SourceRecord } from '../source';
import { PENDING_RECORD, counterField, encodeRecord, OUTCOMES } from '../ledger';
import { UserError, type RunnerContext } from '../context';
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

export interface SnapshotInput extends CampaignBasics {
	id: string;
	state: CampaignState;
	startAt?: number;
	scheduleId?: string;
	/** Records already at hand (an upload, inline rows); otherwise `source` is read. */
	records?: AsyncIterable<SourceRecord>;
}

export async function snapshotCampaign(context: RunnerContext, input: SnapshotInput): Promise<Snapshot> {
	const { redis, keys } = context;
	const { id } = input;
	let total = 0;
	let accepted = 0;
	const rejections: Snapshot['rejections'] = [];
	let rejected = 0;
	let anyPhoneField = false;
	const seen = new Map<string, number>();
	let batch = redis.pipeline();
	let batched = 0;
	const flush = async () => {
		if (batched === 0) return;
		const results = await batch.exec();
		const failed = results?.find(([error]) => error);
		if (failed) throw failed[0];
		batch = redis.pipeline();
		batched = 0;
	};

	try {
		const records = input.records ?? readRecords(input.source, formatOf(input.source, input.format));
		for await (const record of records) {
			const index = total++;
			let verdict;
			if (record.ok) {
				if (record.fields.phone !== undefined) anyPhoneField = true;
				verdict = checkRow(record.line, record.fields, seen);
			} else {
				verdict = { ok: false as const, line: record.line, phone: '', reason: record.reason };
			}
			if (verdict.ok) {
				accepted++;
				batch.hset(keys.recipients(id), String(index), encodeRecipient(verdict.recipient));
				batch.hset(keys.ledger(id), String(index), PENDING_RECORD);
			} else {
				rejected++;
				if (rejections.length < REJECTIONS_SHOWN) rejections.push({ line: verdict.line, phone: verdict.phone, reason: verdict.reason });
				batch.hset(keys.recipients(id), String(index), encodeRecipient({ line: verdict.line, phone: verdict.phone }));
				batch.hset(keys.ledger(id), String(index), encodeRecord({ outcome: 'rejected', attempts: 0, ref: '', error: `line ${verdict.line}: ${verdict.reason}` }));
			}
			if (++batched >= WRITE_BATCH) await flush();
		}
		await flush();
		if (total === 0) throw new SourceError(`${input.source} is empty: it holds no recipient`);
		if (!anyPhoneField) throw new SourceError(`${input.source} has no "phone" column or field: every recipient needs one (digits with country code)`);
	} catch (error) {
		await redis.del(keys.recipients(id), keys.ledger(id));
		if (error instanceof SourceError) throw new UserError(`Nothing was created: ${error.message}`);
		throw error;
	}

	const state: CampaignState = accepted === 0 ? 'completed' : input.state;
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
	});
	await redis.zadd(keys.campaigns, now, id);
	await redis.sadd(keys.numbers, input.from);
	if (state === 'running') await redis.sadd(keys.running, id);
	return { id, state, total, accepted, rejected, rejections };
}
