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
 *   pending -> suppressed                                  (the phone is on the suppression list: at create, or in the claim step)
 *   pending -> capped                                      (over the frequency cap at its claim: campaigns/cap.ts)
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
import type { Keys } from './keys';
import { luaGap } from './campaigns/gap';
import { campaignNumber } from './homes';
import { LUA_EMIT } from './webhooks/events';
import { LUA_CAP } from './campaigns/cap';

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
const BY_LETTER = Object.fromEntries(Object.entries(LETTER).map(([outcome, letter]) => [letter, outcome])) as Record<string, Outcome>;

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
	return [LETTER[record.outcome], record.attempts, record.firstAttemptAt ?? '', record.lastAttemptAt ?? '', record.ref, record.error.replace(/\s+/g, ' ')].join('|');
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
const LUA_HELPERS = `${LUA_EMIT}
local function parse(rec)
  local s, a, f, l, ref, err = string.match(rec, '^(%a)|(%d*)|(%d*)|(%d*)|([^|]*)|(.*)$')
  return { s = s, a = tonumber(a) or 0, f = f, l = l, ref = ref, err = err }
end
local function write(ledger, idx, r)
  redis.call('HSET', ledger, idx, r.s .. '|' .. r.a .. '|' .. r.f .. '|' .. r.l .. '|' .. r.ref .. '|' .. r.err)
end
-- Returns what is left in the state moved from (nil for no move).
local function move(meta, from, to)
  if from == to then return end
  local left = redis.call('HINCRBY', meta, 'n_' .. from, -1)
  redis.call('HINCRBY', meta, 'n_' .. to, 1)
  return left
end
local function finishIfDone(meta, running, outbox, id, now)
  local state = redis.call('HMGET', meta, 'state', 'n_p', 'n_c')
  if state[1] ~= 'running' then return false end
  local open = (tonumber(state[2]) or 0) + (tonumber(state[3]) or 0)
  if open == 0 then
    redis.call('HSET', meta, 'state', 'completed', 'finished_at', now)
    redis.call('SREM', running, id)
    emit(outbox, meta, id, 'campaign.finished', now)
    return true
  end
  return false
end
`;

/**
 * A send job's run of recipients (jobs.ts), for the start gate's script (campaigns/spacing.ts),
 * which takes the start and the claim in one call. `openInRun` finds the run's next recipient to
 * send: pending, or claimed by this attempt; a claim an earlier attempt left is turned unknown on
 * the way (it may have sent: never resent); a pending recipient the audience rules refuse is made
 * final (expired, suppressed, capped) or, over the frequency cap in a campaign that waits, left
 * pending in its waiting set (campaigns/cap.ts). `claimAt` claims it, counts it on its phone's cap,
 * and returns its snapshot row and attempts so far.
 */
export const LUA_RUN_CLAIM = `${LUA_HELPERS}${LUA_CAP}
-- What the claim step's rules read of the campaign: START reads them with its state, in one HMGET
-- (its fields from position at on).
local CLAIM_FIELDS = { 'end_at', 'clock_offset', 'transactional' }
local function claimSettings(values, at)
  return { endAt = tonumber(values[at] or ''), offset = tonumber(values[at + 1] or '0') or 0, transactional = values[at + 2] == '1' }
end
-- The campaign's end (campaigns/windows.ts), on the campaign's clock: Redis's, plus a test's clock_offset.
local function expiredVerdict(c, now)
  return c.endAt ~= nil and tonumber(now) + c.offset >= c.endAt
end
-- A phone on the number's copy of the suppression list (audience/suppression.ts) is made final
-- here, suppressed, with the list's note; a transactional campaign sends all the same.
local function suppressedVerdict(c, meta, ledger, aud, i, r, phone)
  local note = phone and redis.call('HGET', aud.suppressed, phone)
  if not note or c.transactional then return false end
  r.s = 'z'; r.err = note
  write(ledger, i, r); move(meta, 'p', 'z')
  return true
end
-- aud: the audience rules' keys (recipients: the snapshot, suppressed: the number's copy of the
-- list, and the cap's: campaigns/cap.ts LUA_CAP) and the default cap policy; c: claimSettings.
-- Returns the index, its record, its snapshot row and its phone; a pending recipient a rule
-- refuses is made final on the way, as a lost claim is.
local function openInRun(meta, ledger, running, outbox, first, last, token, now, id, aud, c)
  local lost = false
  for i = first, last - 1 do
    local rec = redis.call('HGET', ledger, i)
    if rec then
      local r = parse(rec)
      if r.s == 'p' then
        if expiredVerdict(c, now) then
          r.s = 'e'; r.err = '${EXPIRED_REASON}'
          write(ledger, i, r); move(meta, 'p', 'e'); lost = true
        else
          local row = redis.call('HGET', aud.recipients, i)
          local phone = rowPhone(row)
          if suppressedVerdict(c, meta, ledger, aud, i, r, phone) then lost = true
          -- Capped (final: the campaign may be done) or waiting: not this run's to send now.
          elseif capVerdict(aud, c, phone, meta, ledger, i, r) then lost = true
          else return i, r, row, phone end
        end
      elseif r.s == 'c' and r.ref == token then
        local row = redis.call('HGET', aud.recipients, i)
        return i, r, row, rowPhone(row)
      elseif r.s == 'c' then
        r.s = 'u'; r.err = 'an earlier attempt claimed this send and never settled it (crash or stall)'
        write(ledger, i, r); move(meta, 'c', 'u'); lost = true
      end
    end
  end
  if lost then finishIfDone(meta, running, outbox, id, now) end
  return nil
end
-- Claims the recipient openInRun found and counts it on its phone's frequency cap.
local function claimAt(meta, ledger, i, r, token, now, aud, c, phone)
  if r.s == 'p' then
    r.s = 'c'; r.a = r.a + 1; if r.f == '' then r.f = now end; r.l = now; r.ref = token; r.err = ''
    write(ledger, i, r); move(meta, 'p', 'c')
    capCount(aud, c, phone, now)
  end
end
`;

/**
 * KEYS: meta, ledger, running, outbox, recipients. ARGV: index, token, now, campaign id, start
 * taken "1"/"0". Returns { 'claimed', the recipient's snapshot row } (the send needs no second
 * read), or { 'inactive' } (campaign not running, or no start taken: leave pending), { 'final' },
 * { 'missing' }, or { 'unknown' } (a claim left by an attempt that never settled: it may have
 * sent, so never resend).
 */
const CLAIM = `${LUA_HELPERS}
local meta, ledger, running, outbox, recipients = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local idx, token, now, id, started = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local rec = redis.call('HGET', ledger, idx)
if not rec then return { 'missing' } end
local r = parse(rec)
if r.s == 'c' then
  if r.ref == token then return { 'claimed', redis.call('HGET', recipients, idx) } end
  r.s = 'u'; r.err = 'an earlier attempt claimed this send and never settled it (crash or stall)'
  write(ledger, idx, r); move(meta, 'c', 'u')
  finishIfDone(meta, running, outbox, id, now)
  return { 'unknown' }
end
if r.s ~= 'p' then return { 'final' } end
if started ~= '1' or redis.call('HGET', meta, 'state') ~= 'running' then return { 'inactive' } end
r.s = 'c'; r.a = r.a + 1; if r.f == '' then r.f = now end; r.l = now; r.ref = token; r.err = ''
write(ledger, idx, r); move(meta, 'p', 'c')
return { 'claimed', redis.call('HGET', recipients, idx) }
`;

/**
 * KEYS: meta, ledger, running, outbox, ticks, then the campaign's snapshot and the cap's per-phone
 * prefix (campaigns/cap.ts). ARGV: index, token, outcome letter, now, ref, error, pauseAfter,
 * campaign id, counter ('' or a campaign field to add 1 to: holds, retries). Settles a claim this
 * attempt holds; one proved not sent (pending again, failed, not_sent) gives its count on the
 * phone's frequency cap back. An attempt that finds its claim
 * turned 'unknown' by a sweep may still prove it 'sent' (it holds the token); nothing else may.
 * Returns 'ok', 'lost', or the campaign's new state when this settle changed it ('completed',
 * 'paused'), so the process that caused the change logs it.
 */
const LUA_SETTLE = `
local function settle(meta, ledger, running, outbox, ticks, idx, token, to, now, ref, err, pauseAfter, id, counter, cap)
local rec = redis.call('HGET', ledger, idx)
if not rec then return 'lost' end
local r = parse(rec)
if r.ref ~= token or not (r.s == 'c' or (r.s == 'u' and to == 's')) then return 'lost' end
local from = r.s
if from == 'c' and (to == 'p' or to == 'f' or to == 'n') then capGiveBack(cap, meta, idx, r.l) end
r.s = to; r.l = now; r.err = err
if to == 's' then r.ref = ref elseif to == 'p' then r.ref = '' end
write(ledger, idx, r)
local claimedLeft = move(meta, from, to)
-- A send resets the failure streak in the same write (one command per send less).
if to == 's' then redis.call('HSET', meta, 'last_progress_at', now, 'failure_streak', 0) else redis.call('HSET', meta, 'last_progress_at', now) end
if counter ~= '' then redis.call('HINCRBY', meta, counter, 1) end
if to == 's' then
  local second = math.floor(tonumber(now) / 1000)
  -- The second's first send drops the one ten minutes old and keeps the hash alive: once a second, not per send.
  if redis.call('HINCRBY', ticks, second, 1) == 1 then redis.call('HDEL', ticks, second - 600); redis.call('EXPIRE', ticks, 660) end
end
if to == 'f' then
  local streak = redis.call('HINCRBY', meta, 'failure_streak', 1)
  local state = redis.call('HGET', meta, 'state')
  -- A stopped campaign keeps the reason it stopped; sends that were in flight do not overwrite it.
  if state == 'running' then redis.call('HSET', meta, 'last_error', err) end
  if streak >= pauseAfter and state == 'running' then
    redis.call('HSET', meta, 'state', 'paused', 'last_error', 'paused itself after ' .. streak .. ' failed recipients in a row; last: ' .. err)
    redis.call('SREM', running, id)
    emit(outbox, meta, id, 'campaign.paused', now)
    return 'paused'
  end
end
-- Another claim still open, or this recipient pending again: nothing to finish, and no read of the counters to learn it.
if (from == 'c' and claimedLeft and claimedLeft > 0) or to == 'p' then return 'ok' end
if finishIfDone(meta, running, outbox, id, now) then return 'completed' end
return 'ok'
end
`;

const SETTLE = `${LUA_HELPERS}${LUA_CAP}${LUA_SETTLE}
return settle(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], tonumber(ARGV[7]), ARGV[8], ARGV[9], { recipients = KEYS[6], sends = KEYS[7] })
`;

/** SETTLE_AND_PLACE's answer for a settle of its run's last index: the run ends without another gate call. */
const RUN_OVER = -2;

/**
 * KEYS: SETTLE's first five, the number's spacing hash (campaigns/spacing.ts), then the campaign's
 * snapshot and the cap's per-phone prefix (a give-back: campaigns/cap.ts). ARGV: SETTLE's, then the
 * run's last+1 index and the start gate's window room. A run's settle that also takes the place on
 * the number's clock of the run's next recipient: the same step as the gate's first one (the next
 * place, gapUs(rate) after the one before, campaigns/gap.ts), taken here so that recipient's start
 * needs one gate call, the window step, instead of two. Returns { SETTLE's answer, microseconds to
 * that place }, or { SETTLE's answer, RUN_OVER } when this was the run's last index (the run ends
 * without asking the gate), or { SETTLE's answer, -1 } for no place (no rate, or the settle did not
 * leave the campaign going). Whether the indexes left are still open is not asked here (a read per
 * send): the next start asks, and a place taken for a run whose rest was already settled (a resumed
 * campaign) is one gap of the number's clock unused.
 */
const SETTLE_AND_PLACE = `${luaGap('tonumber(ARGV[11])')}${LUA_HELPERS}${LUA_CAP}${LUA_SETTLE}
local meta, ledger, running, outbox, spacing = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[6]
local idx, token, now, id = ARGV[1], ARGV[2], ARGV[4], ARGV[8]
local result = settle(meta, ledger, running, outbox, KEYS[5], idx, token, ARGV[3], now, ARGV[5], ARGV[6], tonumber(ARGV[7]), id, ARGV[9], { recipients = KEYS[7], sends = KEYS[8] })
if result ~= 'ok' then return { result, -1 } end
if tonumber(idx) + 1 >= tonumber(ARGV[10]) then return { result, ${RUN_OVER} } end
local gate = redis.call('HMGET', spacing, 'rate', 'next')
local rate = tonumber(gate[1] or '0')
if not rate or rate <= 0 then return { result, -1 } end
local time = redis.call('TIME')
local nowUs = tonumber(time[1]) * 1000000 + tonumber(time[2])
local at = math.max(nowUs, tonumber(gate[2] or '0') or 0)
redis.call('HSET', spacing, 'next', string.format('%.0f', at + gapUs(rate)))
return { result, math.floor(at - nowUs), string.format('%.0f', at) }
`;

/**
 * KEYS: meta, ledger, running, outbox. ARGV: from letter, to letter, now, error, campaign id, then indexes.
 * Moves each listed record that is in state `from`. Returns how many moved.
 */
const MOVE_MANY = `${LUA_HELPERS}
local meta, ledger, running, outbox = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local from, to, now, err, id = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local moved = 0
for i = 6, #ARGV do
  local rec = redis.call('HGET', ledger, ARGV[i])
  if rec then
    local r = parse(rec)
    if r.s == from then
      r.s = to
      if err ~= '' then r.err = err end
      if to == 'p' then r.ref = '' end
      write(ledger, ARGV[i], r); move(meta, from, to); moved = moved + 1
    end
  end
end
finishIfDone(meta, running, outbox, id, now)
return moved
`;

/**
 * KEYS: meta, ledger, running, outbox, the campaign's snapshot, the cap's per-phone prefix. ARGV:
 * index, to letter ('s' or 'n'), message id, error, now, id. Resolves one unknown recipient from
 * the service's records (reconcile); one proved not sent gives its count on the frequency cap back.
 */
const RESOLVE_UNKNOWN = `${LUA_HELPERS}${LUA_CAP}
local meta, ledger, running, outbox = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local idx, to, ref, err, now, id = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local rec = redis.call('HGET', ledger, idx)
if not rec then return 0 end
local r = parse(rec)
if r.s ~= 'u' then return 0 end
if to == 'n' then capGiveBack({ recipients = KEYS[5], sends = KEYS[6] }, meta, idx, r.l) end
r.s = to; r.err = err; if to == 's' then r.ref = ref end
write(ledger, idx, r); move(meta, 'u', to)
finishIfDone(meta, running, outbox, id, now)
return 1
`;

/**
 * KEYS: meta, ledger, running, outbox. ARGV: older-than timestamp, now, campaign id, then indexes.
 * Claims last touched before the timestamp belong to attempts that are gone: unknown.
 */
const EXPIRE_CLAIMS = `${LUA_HELPERS}
local meta, ledger, running, outbox = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local before, now, id = tonumber(ARGV[1]), ARGV[2], ARGV[3]
local moved = 0
for i = 4, #ARGV do
  local rec = redis.call('HGET', ledger, ARGV[i])
  if rec then
    local r = parse(rec)
    if r.s == 'c' and (tonumber(r.l) or 0) < before then
      r.s = 'u'; r.err = 'the attempt that claimed this send stopped answering before it settled (crash or stall)'
      write(ledger, ARGV[i], r); move(meta, 'c', 'u'); moved = moved + 1
    end
  end
end
finishIfDone(meta, running, outbox, id, now)
return moved
`;

type Reply = string | number | Array<string | null>;

/** Records read together when a whole ledger is walked. */
const WALK_CHUNK = 1000;

export class Ledger {
	constructor(
		private readonly redis: RedisConnection,
		private readonly keys: Keys,
	) {
		const define = (name: string, lua: string, numberOfKeys: number) => {
			if (!(name in this.redis)) this.redis.defineCommand(name, { lua, numberOfKeys });
		};
		define('convoClaim', CLAIM, 5);
		define('convoSettle', SETTLE, 7);
		define('convoSettleAndPlace', SETTLE_AND_PLACE, 8);
		define('convoMoveMany', MOVE_MANY, 4);
		define('convoResolveUnknown', RESOLVE_UNKNOWN, 6);
		define('convoExpireClaims', EXPIRE_CLAIMS, 4);
	}

	private call(name: string, keys: string[], args: Array<string | number>): Promise<Reply> {
		return (this.redis as unknown as Record<string, (...a: Array<string | number>) => Promise<Reply>>)[name](...keys, ...args);
	}

	/** The campaign's group (keys.ts): its hash, ledger, number's running set and outbox, then what a script adds. */
	private async keysOf(id: string): Promise<{ base: string[]; from: string }> {
		const from = await campaignNumber({ redis: this.redis, keys: this.keys }, id);
		if (from === undefined) throw new Error(`no campaign ${id}`);
		return { base: [this.keys.campaign(from, id), this.keys.ledger(from, id), this.keys.running(from), this.keys.outbox(from)], from };
	}

	private async base(id: string): Promise<string[]> {
		return (await this.keysOf(id)).base;
	}

	/**
	 * `startTaken` false: this attempt took no start (spacing.ts found its campaign not running), so
	 * it claims nothing; it still turns a claim an earlier attempt left into unknown, as any claim does.
	 * A claim comes with the recipient's snapshot row (undefined if the snapshot lacks it).
	 */
	async claim(id: string, index: number, token: string, startTaken = true): Promise<{ outcome: 'claimed'; row?: string } | { outcome: 'inactive' | 'final' | 'missing' | 'unknown' }> {
		const { base, from } = await this.keysOf(id);
		const [outcome, row] = (await this.call('convoClaim', [...base, this.keys.recipients(from, id)], [index, token, Date.now(), id, startTaken ? '1' : '0'])) as [string, (string | null)?];
		if (outcome === 'claimed') return { outcome, row: row ?? undefined };
		return { outcome: outcome as 'inactive' | 'final' | 'missing' | 'unknown' };
	}

	/** `counter`: a campaign counter this outcome adds 1 to (a 429 hold, a retry), in the same step. */
	async settle(
		id: string,
		index: number,
		token: string,
		to: 'sent' | 'failed' | 'unknown' | 'not_sent' | 'pending',
		ref: string,
		error: string,
		pauseAfter: number,
		counter: '' | 'holds' | 'retries' = '',
	): Promise<'ok' | 'lost' | 'completed' | 'paused'> {
		const { base, from } = await this.keysOf(id);
		return this.call('convoSettle', [...base, this.keys.ticks(from, id), this.keys.recipients(from, id), this.keys.capSends(from)], [index, token, LETTER[to], Date.now(), ref, error.replace(/\s+/g, ' '), pauseAfter, id, counter]) as Promise<'ok'>;
	}

	/**
	 * A settle of a run's recipient (campaigns/send.ts) that also takes the place on the number's
	 * clock of the run's next index before runEnd, if any (`room`: the start gate's window room).
	 * `place`: microseconds to that place and its time on Redis's clock, undefined for none;
	 * `runOver`: this was the run's last index.
	 */
	async settleAndPlace(
		id: string,
		claim: { index: number; token: string },
		to: 'sent' | 'failed' | 'unknown',
		ref: string,
		error: string,
		pauseAfter: number,
		run: { end: number; room: number },
	): Promise<{ result: 'ok' | 'lost' | 'completed' | 'paused'; place?: { inUs: number; atUs: string }; runOver: boolean }> {
		const { base, from } = await this.keysOf(id);
		const [result, placeInUs, placeAtUs] = (await this.call(
			'convoSettleAndPlace',
			[...base, this.keys.ticks(from, id), this.keys.spacing(from), this.keys.recipients(from, id), this.keys.capSends(from)],
			[claim.index, claim.token, LETTER[to], Date.now(), ref, error.replace(/\s+/g, ' '), pauseAfter, id, '', run.end, run.room],
		)) as [string, number, string?];
		return { result: result as 'ok', place: placeInUs >= 0 && placeAtUs ? { inUs: placeInUs, atUs: placeAtUs } : undefined, runOver: placeInUs === RUN_OVER };
	}

	async moveMany(id: string, from: Outcome, to: Outcome, indexes: number[], error = ''): Promise<number> {
		if (indexes.length === 0) return 0;
		return Number(await this.call('convoMoveMany', await this.base(id), [LETTER[from], LETTER[to], Date.now(), error, id, ...indexes]));
	}

	/** Completes a running campaign that has nothing open (e.g. after a resume that found nothing to send). */
	async finishIfDone(id: string): Promise<void> {
		await this.call('convoMoveMany', await this.base(id), ['-', '-', Date.now(), '', id]);
	}

	async resolveUnknown(id: string, index: number, to: 'sent' | 'not_sent', messageId: string, reason: string): Promise<boolean> {
		const { base, from } = await this.keysOf(id);
		return Number(await this.call('convoResolveUnknown', [...base, this.keys.recipients(from, id), this.keys.capSends(from)], [index, LETTER[to], messageId, reason, Date.now(), id])) === 1;
	}

	async expireClaims(id: string, before: number, indexes: number[]): Promise<number> {
		if (indexes.length === 0) return 0;
		return Number(await this.call('convoExpireClaims', await this.base(id), [before, Date.now(), id, ...indexes]));
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
	async *walk(id: string, total: number, start = 0): AsyncGenerator<{ from: number; records: Array<LedgerRecord | undefined> }> {
		for (let from = start; from < total; from += WALK_CHUNK) yield { from, records: await this.read(id, from, Math.min(WALK_CHUNK, total - from)) };
	}
}
