/**
 * The per-recipient ledger: the reason the runner never sends twice. The service has no
 * idempotency key and BullMQ delivers a job at least once, so every send is claimed in Redis,
 * atomically, BEFORE the HTTP call, and settled after it:
 *
 *   pending -> claimed -> sent | failed | unknown          (one attempt)
 *   claimed -> pending                                     (provably not sent: 5xx, 429, refused)
 *   claimed, found again by a later attempt -> unknown     (a crash or stall; never resent blindly)
 *   pending -> cancelled | not_sent ; not_sent -> pending  (operator acts)
 *   unknown -> sent | not_sent                             (reconcile, from the service's records)
 *   pending -> suppressed                                  (the phone is on the suppression list: at create, or in
 *                                                           the claim step)
 *   pending -> capped                                      (over the frequency cap at its claim: audience/cap.ts)
 *
 * A record is one hash field: `S|attempts|first_ms|last_ms|ref|error`, where S is the state's
 * letter and ref the claim token (claimed, unknown) or the message id (sent). The campaign hash
 * keeps one counter per state (n_p, n_c, ...), moved in the same script as the record, so counts
 * are exact without a scan; the same scripts complete or auto-pause the campaign, and write the
 * event of that transition to the outbox (webhooks/events.ts) in the same step. Every key a script
 * touches is in the campaign's number's group (keys.ts), so it runs on one Redis Cluster slot.
 */
import { RECIPIENT_OUTCOMES, type RecipientOutcome } from 'convo-contract';

import type { RedisConnection } from './redis';
import { redisScript } from './redisScripts';
import type { Keys } from './keys';
import { campaignNumber } from './keyGroups';

/** A recipient's outcomes are the contract's (the report and the counts show them to clients). */
export const OUTCOMES = RECIPIENT_OUTCOMES;
export type Outcome = RecipientOutcome;

const LETTER: Record<Outcome, string> = {
	pending: 'p',
	claimed: 'c',
	sent: 's',
	failed: 'f',
	rejected: 'r',
	cancelled: 'x',
	unknown: 'u',
	not_sent: 'n',
	expired: 'e',
	suppressed: 'z',
	capped: 'k',
};
const BY_LETTER = Object.fromEntries(Object.entries(LETTER).map(([outcome, letter]) => [letter, outcome])) as Record<
	string,
	Outcome
>;

export const counterField = (outcome: Outcome) => `n_${LETTER[outcome]}`;

/** Why an expired recipient was not sent (the claim step's expiredVerdict, and the feeder at the end). */
export const EXPIRED_REASON = 'the campaign ended before it was sent';

export interface LedgerRecord {
	outcome: Outcome;
	attempts: number;
	firstAttemptAt?: number;
	lastAttemptAt?: number;
	/** Claim token (claimed, unknown) or message id (sent). */
	ref: string;
	error: string;
}

export function encodeRecord(record: LedgerRecord): string {
	return [
		LETTER[record.outcome],
		record.attempts,
		record.firstAttemptAt ?? '',
		record.lastAttemptAt ?? '',
		record.ref,
		record.error.replace(/\s+/g, ' '),
	].join('|');
}

function decodeRecord(text: string): LedgerRecord {
	const [letter, attempts, first, last, ref, ...error] = text.split('|');
	return {
		outcome: BY_LETTER[letter],
		attempts: Number(attempts) || 0,
		firstAttemptAt: first ? Number(first) : undefined,
		lastAttemptAt: last ? Number(last) : undefined,
		ref: ref ?? '',
		error: error.join('|'),
	};
}

export const PENDING_RECORD = encodeRecord({ outcome: 'pending', attempts: 0, ref: '', error: '' });

// Shared Lua: parse a record, write one, move a counter, finish the campaign when nothing is open.
/** lua/settleAndPlace-9.lua's answer for a settle of its job's last index: the job ends without another gate call. */
const JOB_OVER = -2;

type Reply = string | number | Array<string | null>;

/** Records read together when a whole ledger is walked. */
const WALK_CHUNK = 1000;

export class Ledger {
	constructor(
		private readonly redis: RedisConnection,
		private readonly keys: Keys,
	) {}

	private call(name: string, keys: string[], args: Array<string | number>): Promise<Reply> {
		return redisScript(this.redis, name)(keys, args) as Promise<Reply>;
	}

	/** The campaign's group (keys.ts): its hash, ledger, number's running set and outbox, then what a script adds. */
	private async keysOf(id: string): Promise<{ base: string[]; from: string }> {
		const from = await campaignNumber({ redis: this.redis, keys: this.keys }, id);
		if (from === undefined) throw new Error(`no campaign ${id}`);
		return {
			base: [this.keys.campaign(from, id), this.keys.ledger(from, id), this.keys.running(from), this.keys.outbox(from)],
			from,
		};
	}

	private async base(id: string): Promise<string[]> {
		return (await this.keysOf(id)).base;
	}

	/**
	 * `startTaken` false: this attempt took no start (spacing.ts found its campaign not running), so
	 * it claims nothing; it still turns a claim an earlier attempt left into unknown, as any claim does.
	 * A claim comes with the recipient's snapshot row (undefined if the snapshot lacks it).
	 */
	async claim(
		id: string,
		index: number,
		token: string,
		startTaken = true,
	): Promise<{ outcome: 'claimed'; row?: string } | { outcome: 'inactive' | 'final' | 'missing' | 'unknown' }> {
		const { base, from } = await this.keysOf(id);
		const [outcome, row] = (await this.call(
			'claim',
			[...base, this.keys.recipients(from, id)],
			[index, token, Date.now(), id, startTaken ? '1' : '0'],
		)) as [string, (string | null)?];
		if (outcome === 'claimed') return { outcome, row: row ?? undefined };
		return { outcome: outcome as 'inactive' | 'final' | 'missing' | 'unknown' };
	}

	/** `counter`: a campaign counter this outcome adds 1 to (a 429 hold, a retry, a daily limit wait), in one step. */
	async settle(
		id: string,
		index: number,
		token: string,
		to: 'sent' | 'failed' | 'unknown' | 'not_sent' | 'pending',
		ref: string,
		error: string,
		pauseAfter: number,
		counter: '' | 'holds' | 'retries' | 'budget_waits' = '',
	): Promise<'ok' | 'lost' | 'completed' | 'paused'> {
		const { base, from } = await this.keysOf(id);
		return this.call(
			'settle',
			[
				...base,
				this.keys.ticks(from, id),
				this.keys.recipients(from, id),
				this.keys.capSends(from),
				this.keys.dailyCounts(from),
			],
			[index, token, LETTER[to], Date.now(), ref, error.replace(/\s+/g, ' '), pauseAfter, id, counter],
		) as Promise<'ok'>;
	}

	/**
	 * The final settles of a send job's volley of recipients (sending/send.ts), in one call, that also
	 * take the place on the number's clock of the job's next volley before `job.end`, if any and if
	 * `job.place` (`room`: the rate span's room, SPAN_ROOM; `volleyMs`: RUNNER_SEND_VOLLEY).
	 * `result`: the campaign's new state if a settle changed it, else 'lost' if any claim was lost,
	 * else 'ok'; `place`: microseconds to that place and its time on Redis's clock, undefined for
	 * none; `jobOver`: the volley held the job's last index.
	 */
	async settleAndPlace(
		id: string,
		token: string,
		settles: Array<{ index: number; to: 'sent' | 'failed' | 'unknown'; ref: string; error: string }>,
		pauseAfter: number,
		job: { end: number; room: number; volleyMs: number; place: boolean },
	): Promise<{
		result: 'ok' | 'lost' | 'completed' | 'paused';
		place?: { inUs: number; atUs: string };
		jobOver: boolean;
	}> {
		const { base, from } = await this.keysOf(id);
		const [result, placeInUs, placeAtUs] = (await this.call(
			'settleAndPlace',
			[
				...base,
				this.keys.ticks(from, id),
				this.keys.spacing(from),
				this.keys.recipients(from, id),
				this.keys.capSends(from),
				this.keys.dailyCounts(from),
			],
			[
				Date.now(),
				pauseAfter,
				id,
				job.end,
				job.room,
				job.volleyMs,
				token,
				job.place ? '1' : '',
				...settles.flatMap(({ index, to, ref, error }) => [index, LETTER[to], ref, error.replace(/\s+/g, ' ')]),
			],
		)) as [string, number, string?];
		return {
			result: result as 'ok',
			place: placeInUs >= 0 && placeAtUs ? { inUs: placeInUs, atUs: placeAtUs } : undefined,
			jobOver: placeInUs === JOB_OVER,
		};
	}

	async moveMany(id: string, from: Outcome, to: Outcome, indexes: number[], error = ''): Promise<number> {
		if (indexes.length === 0) return 0;
		return Number(
			await this.call('moveMany', await this.base(id), [LETTER[from], LETTER[to], Date.now(), error, id, ...indexes]),
		);
	}

	/** Completes a running campaign that has nothing open (e.g. after a resume that found nothing to send). */
	async finishIfDone(id: string): Promise<void> {
		await this.call('moveMany', await this.base(id), ['-', '-', Date.now(), '', id]);
	}

	async resolveUnknown(
		id: string,
		index: number,
		to: 'sent' | 'not_sent',
		messageId: string,
		reason: string,
	): Promise<boolean> {
		const { base, from } = await this.keysOf(id);
		return (
			Number(
				await this.call(
					'resolveUnknown',
					[...base, this.keys.recipients(from, id), this.keys.capSends(from)],
					[index, LETTER[to], messageId, reason, Date.now(), id],
				),
			) === 1
		);
	}

	async expireClaims(id: string, before: number, indexes: number[]): Promise<number> {
		if (indexes.length === 0) return 0;
		return Number(await this.call('expireClaims', await this.base(id), [before, Date.now(), id, ...indexes]));
	}

	/** Records of a range of indexes, in order (undefined past the end). */
	async read(id: string, from: number, count: number): Promise<Array<LedgerRecord | undefined>> {
		if (count <= 0) return [];
		const fields = Array.from({ length: count }, (_, i) => String(from + i));
		const number = await campaignNumber({ redis: this.redis, keys: this.keys }, id);
		if (number === undefined) return fields.map(() => undefined);
		const values = await this.redis.hmget(this.keys.ledger(number, id), ...fields);
		return values.map((value) => (value === null ? undefined : decodeRecord(value)));
	}

	/** The records of these indexes, in their order (a windowed campaign's zone list: the feeder). */
	async readAt(id: string, indexes: number[]): Promise<Array<LedgerRecord | undefined>> {
		if (indexes.length === 0) return [];
		const number = await campaignNumber({ redis: this.redis, keys: this.keys }, id);
		if (number === undefined) return indexes.map(() => undefined);
		const values = await this.redis.hmget(this.keys.ledger(number, id), ...indexes.map(String));
		return values.map((value) => (value === null ? undefined : decodeRecord(value)));
	}

	/**
	 * The campaign's records from index `start` to `total`, in order, a chunk at a time: memory stays
	 * flat for any campaign size. The one walk of a whole ledger (report, control, reconcile, sweep).
	 */
	async *walk(
		id: string,
		total: number,
		start = 0,
	): AsyncGenerator<{ from: number; records: Array<LedgerRecord | undefined> }> {
		for (let from = start; from < total; from += WALK_CHUNK)
			yield { from, records: await this.read(id, from, Math.min(WALK_CHUNK, total - from)) };
	}
}
