/**
 * The ledger's Lua scripts (runner/src/ledger.ts) called one by one against real Redis, no runner
 * process: for each step of a recipient (claim, settle, sweep, reconcile, moves) the record it
 * leaves, the campaign's counters and state, and what it writes to the outbox. The end-to-end tests
 * (kill.test.ts, webhooks.test.ts) reach these paths only by chance or in minutes; the mutation
 * check (docs/mutation-check.md) runs this file first against each change to these scripts.
 */
import type { Redis } from 'ioredis';

import { transition } from '../../runner/src/campaigns/state';
import { counterField, type Outcome } from '../../runner/src/ledger';
import type { OutboxEntry } from '../../runner/src/webhooks/events';
import { monitorCommands, useRunnerUnderTest, inlineCampaign } from './support';

jest.setTimeout(60_000);

const runner = useRunnerUnderTest();
/** The number every campaign here sends from: its group holds the campaigns' keys, running set and outbox (keys.ts). */
const sender = () => runner.business.phoneNumbers[0];
let campaigns = 0;

async function newCampaign(recipients: number): Promise<string> {
	return inlineCampaign(runner, recipients, `49152${String(campaigns++).padStart(2, '0')}`);
}

async function events(campaign: string): Promise<string[]> {
	const entries = await runner.context.redis.lrange(runner.context.keys.outbox(sender()), 0, -1);
	return entries
		.map((text) => JSON.parse(text) as OutboxEntry)
		.filter((entry) => entry.id.startsWith(`ev-${campaign}-`))
		.map((entry) => entry.type);
}

/** The campaign's counters of these outcomes, as numbers (a counter never written is 0). */
async function counts(id: string, ...outcomes: Outcome[]): Promise<Record<string, number>> {
	const values = await runner.context.redis.hmget(
		runner.context.keys.campaign(sender(), id),
		...outcomes.map(counterField),
	);
	return Object.fromEntries(outcomes.map((outcome, i) => [outcome, Number(values[i] ?? 0)]));
}

const field = async (id: string, name: string) =>
	runner.context.redis.hget(runner.context.keys.campaign(sender(), id), name);
const isRunning = async (id: string) =>
	(await runner.context.redis.sismember(runner.context.keys.running(sender()), id)) === 1;
const outcomes = async (id: string, count: number) =>
	(await runner.context.ledger.read(id, 0, count)).map((record) => record?.outcome);

test('a claim takes only a pending recipient of a running campaign, once per token; a second token finds it unknown; the first attempt time stays', async () => {
	const { ledger } = runner.context;
	const id = await newCampaign(4);
	expect(await ledger.claim(id, 9, 'attempt-a')).toEqual({ outcome: 'missing' });
	// No start taken (the gate found the campaign stopped): nothing is claimed.
	expect(await ledger.claim(id, 0, 'attempt-a', false)).toEqual({ outcome: 'inactive' });
	expect(await outcomes(id, 1)).toEqual(['pending']);

	const first = await ledger.claim(id, 0, 'attempt-a');
	expect(first).toMatchObject({ outcome: 'claimed', row: expect.any(String) });
	// The same attempt again (BullMQ delivering the job twice to one attempt) still holds it.
	expect(await ledger.claim(id, 0, 'attempt-a')).toEqual(first);
	expect(await counts(id, 'pending', 'claimed')).toEqual({ pending: 3, claimed: 1 });
	const [claimed] = await ledger.read(id, 0, 1);
	expect(claimed).toMatchObject({
		outcome: 'claimed',
		attempts: 1,
		ref: 'attempt-a',
		firstAttemptAt: expect.any(Number),
	});

	// Provably not sent (a 429): pending again, and claimed again later by another attempt.
	expect(await ledger.settle(id, 0, 'attempt-a', 'pending', '', '429', 10)).toBe('ok');
	await new Promise((resolve) => setTimeout(resolve, 5));
	expect(await ledger.claim(id, 0, 'attempt-b')).toMatchObject({ outcome: 'claimed' });
	const [again] = await ledger.read(id, 0, 1);
	expect(again).toMatchObject({
		outcome: 'claimed',
		attempts: 2,
		ref: 'attempt-b',
		firstAttemptAt: claimed?.firstAttemptAt,
	});
	expect(again?.lastAttemptAt).toBeGreaterThan(claimed?.lastAttemptAt ?? Infinity);

	// Another attempt finds the claim: it may have sent, so it becomes unknown, never claimed twice.
	expect(await ledger.claim(id, 0, 'attempt-c')).toEqual({ outcome: 'unknown' });
	expect(await outcomes(id, 1)).toEqual(['unknown']);
	expect(await counts(id, 'pending', 'claimed', 'unknown')).toEqual({ pending: 3, claimed: 0, unknown: 1 });
	expect(await ledger.claim(id, 0, 'attempt-d')).toEqual({ outcome: 'final' });

	// A paused campaign claims nothing.
	await transition(runner.context, id, ['running'], 'paused', {}, {});
	expect(await ledger.claim(id, 1, 'attempt-e')).toEqual({ outcome: 'inactive' });
	expect(await outcomes(id, 2)).toEqual(['unknown', 'pending']);
});

test('a claim found by a second attempt, the last open recipient, completes the campaign with one campaign.finished', async () => {
	const { ledger } = runner.context;
	const id = await newCampaign(1);
	await ledger.claim(id, 0, 'attempt-a');
	expect(await ledger.claim(id, 0, 'attempt-b')).toEqual({ outcome: 'unknown' });
	expect(await field(id, 'state')).toBe('completed');
	expect(await events(id)).toEqual(['campaign.finished']);
});

test('a settle writes the outcome with its reference, counts and the progress time; only the attempt holding the claim settles it', async () => {
	const { ledger, redis, keys } = runner.context;
	const id = await newCampaign(3);
	expect(await ledger.settle(id, 7, 'attempt-a', 'sent', 'msg-7', '', 10)).toBe('lost');
	await ledger.claim(id, 0, 'attempt-a');
	expect(await ledger.settle(id, 0, 'attempt-other', 'sent', 'msg-0', '', 10)).toBe('lost');
	const before = Date.now();
	expect(await ledger.settle(id, 0, 'attempt-a', 'sent', 'msg-0', '', 10)).toBe('ok');
	expect(await ledger.settle(id, 0, 'attempt-a', 'failed', '', 'late', 10)).toBe('lost');
	const [sent] = await ledger.read(id, 0, 1);
	expect(sent).toMatchObject({ outcome: 'sent', ref: 'msg-0', error: '' });
	expect(Number(await field(id, 'last_progress_at'))).toBeGreaterThanOrEqual(before);
	// The second's send counted for the status's rate, the hash kept from growing and expiring.
	const ticks = await redis.hgetall(keys.ticks(sender(), id));
	expect(Object.values(ticks).map(Number)).toEqual([1]);
	expect(Number(Object.keys(ticks)[0])).toBeGreaterThanOrEqual(Math.floor(before / 1000));
	expect(await redis.pttl(keys.ticks(sender(), id))).toBeGreaterThan(0);

	// Not sent after all (a refusal to retry): pending, the claim token cleared; no tick counted.
	await ledger.claim(id, 1, 'attempt-b');
	expect(await ledger.settle(id, 1, 'attempt-b', 'pending', '', '503', 10)).toBe('ok');
	expect((await ledger.read(id, 1, 1))[0]).toMatchObject({ outcome: 'pending', ref: '', error: '503' });
	expect(Object.values(await redis.hgetall(keys.ticks(sender(), id))).map(Number)).toEqual([1]);
	// The first send of a second drops the second 10 minutes before its own (once a second, not per
	// send). Just after a second turns, seeded for this second and the next, in case the settle's
	// clock turns a second meanwhile: exactly one of the two goes.
	await new Promise((resolve) => setTimeout(resolve, 1010 - (Date.now() % 1000)));
	const second = Math.floor(Date.now() / 1000);
	const old = [String(second - 600), String(second - 599)];
	await redis.hset(keys.ticks(sender(), id), old[0], 5, old[1], 5);
	await ledger.claim(id, 1, 'attempt-c');
	expect(await ledger.settle(id, 1, 'attempt-c', 'sent', 'msg-1', '', 10)).toBe('ok');
	expect((await redis.hmget(keys.ticks(sender(), id), ...old)).filter((value) => value === null)).toHaveLength(1);
	expect(await counts(id, 'pending', 'claimed', 'sent')).toEqual({ pending: 1, claimed: 0, sent: 2 });
	// A 429's hold and a retry are counted by the settle that records them; a plain settle counts neither.
	await ledger.claim(id, 2, 'attempt-d');
	expect(await ledger.settle(id, 2, 'attempt-d', 'pending', '', '429', 10, 'holds')).toBe('ok');
	await ledger.claim(id, 2, 'attempt-e');
	expect(await ledger.settle(id, 2, 'attempt-e', 'pending', '', '503', 10, 'retries')).toBe('ok');
	await ledger.claim(id, 2, 'attempt-f');
	expect(await ledger.settle(id, 2, 'attempt-f', 'pending', '', '503', 10)).toBe('ok');
	const fields = await redis.hgetall(keys.campaign(sender(), id));
	expect({ holds: fields.holds, retries: fields.retries, unnamed: fields[''] }).toEqual({
		holds: '1',
		retries: '1',
		unnamed: undefined,
	});
});

test('failures in a row pause the campaign once, with one campaign.paused; a send in between resets the streak', async () => {
	const { ledger } = runner.context;
	const id = await newCampaign(6);
	const fail = async (index: number) => {
		await ledger.claim(id, index, `attempt-${index}`);
		return ledger.settle(id, index, `attempt-${index}`, 'failed', '', `HTTP 400 number ${index}`, 2);
	};
	expect(await fail(0)).toBe('ok');
	expect(await field(id, 'last_error')).toBe('HTTP 400 number 0');
	await ledger.claim(id, 1, 'attempt-1');
	expect(await ledger.settle(id, 1, 'attempt-1', 'sent', 'msg-1', '', 2)).toBe('ok');
	expect(await field(id, 'failure_streak')).toBe('0');
	expect(await fail(2)).toBe('ok');
	expect(await fail(3)).toBe('paused');
	expect(await field(id, 'state')).toBe('paused');
	expect(await field(id, 'last_error')).toMatch(
		/^paused itself after 2 failed recipients in a row; last: HTTP 400 number 3/,
	);
	expect(await isRunning(id)).toBe(false);
	expect(await events(id)).toEqual(['campaign.paused']);
	// A send that was in flight fails after the pause: it keeps the reason and pauses nothing again.
	await transition(runner.context, id, ['paused'], 'running', {}, {});
	await ledger.claim(id, 4, 'attempt-4');
	await transition(runner.context, id, ['running'], 'paused', { last_error: 'paused by the operator' }, {});
	expect(await ledger.settle(id, 4, 'attempt-4', 'failed', '', 'HTTP 400 late', 2)).toBe('ok');
	expect(await field(id, 'last_error')).toBe('paused by the operator');
	expect(await events(id)).toEqual(['campaign.paused']);
	expect(await counts(id, 'failed', 'sent', 'pending')).toEqual({ failed: 4, sent: 1, pending: 1 });
});

test('a settle while other claims stay open reads no counters to learn it; the last one still completes the campaign', async () => {
	const { ledger, redis, keys } = runner.context;
	const id = await newCampaign(3);
	for (const index of [0, 1, 2]) await ledger.claim(id, index, `attempt-${index}`);
	const monitor = await monitorCommands(redis as Redis);
	const reads: string[] = [];
	let seen = () => {};
	monitor.on('monitor', (_time: string, args: string[]) => {
		if (args[1] === keys.campaign(sender(), id) && args[0].toUpperCase() === 'HMGET') reads.push(args.join(' '));
		if (args[1] === `marker-${id}`) seen();
	});
	try {
		// Claims are still open after each: the move's own count says so, no read of n_p and n_c (finishIfDone's HMGET) follows.
		expect(await ledger.settle(id, 0, 'attempt-0', 'sent', 'msg-0', '', 5)).toBe('ok');
		expect(await ledger.settle(id, 1, 'attempt-1', 'failed', '', 'refused', 5)).toBe('ok');
		// MONITOR's feed lags the replies: a marker command seen there means the settles' commands were too.
		await new Promise<void>((resolve) => {
			seen = resolve;
			void redis.exists(`marker-${id}`);
		});
		expect(reads).toEqual([]);
		expect(await ledger.settle(id, 2, 'attempt-2', 'sent', 'msg-2', '', 5)).toBe('completed');
	} finally {
		monitor.disconnect();
	}
	expect(await field(id, 'state')).toBe('completed');
	expect(await counts(id, 'pending', 'claimed', 'sent', 'failed')).toEqual({
		pending: 0,
		claimed: 0,
		sent: 2,
		failed: 1,
	});
	expect(await events(id)).toEqual(['campaign.finished']);
});

test('the last open recipient settled completes the campaign once: state, end time, out of the running set, one campaign.finished', async () => {
	const { ledger } = runner.context;
	const id = await newCampaign(2);
	await ledger.claim(id, 0, 'attempt-0');
	expect(await ledger.settle(id, 0, 'attempt-0', 'sent', 'msg-0', '', 10)).toBe('ok');
	expect(await field(id, 'state')).toBe('running');
	await ledger.claim(id, 1, 'attempt-1');
	const before = Date.now();
	expect(await ledger.settle(id, 1, 'attempt-1', 'failed', '', 'HTTP 400', 10)).toBe('completed');
	expect(await field(id, 'state')).toBe('completed');
	expect(Number(await field(id, 'finished_at'))).toBeGreaterThanOrEqual(before);
	expect(await isRunning(id)).toBe(false);
	expect(await events(id)).toEqual(['campaign.finished']);
	await ledger.finishIfDone(id);
	expect(await events(id)).toEqual(['campaign.finished']);
});

test('a running campaign with nothing open is completed by the next step that looks, not while it is paused', async () => {
	const { ledger } = runner.context;
	const id = await newCampaign(3);
	await transition(runner.context, id, ['running'], 'paused', {}, {});
	// Moves only what is in the state named, and completes nothing while paused.
	expect(await ledger.moveMany(id, 'pending', 'not_sent', [0, 1, 7], 'stopped')).toBe(2);
	expect(await ledger.moveMany(id, 'pending', 'not_sent', [0, 1])).toBe(0);
	expect((await ledger.read(id, 0, 3)).map((record) => [record?.outcome, record?.error])).toEqual([
		['not_sent', 'stopped'],
		['not_sent', 'stopped'],
		['pending', ''],
	]);
	expect(await field(id, 'state')).toBe('paused');
	// Back to pending: the reason stays (no new one given).
	expect(await ledger.moveMany(id, 'not_sent', 'pending', [1])).toBe(1);
	expect((await ledger.read(id, 1, 1))[0]).toMatchObject({ outcome: 'pending', error: 'stopped' });
	expect(await ledger.moveMany(id, 'pending', 'not_sent', [1, 2])).toBe(2);
	expect(await counts(id, 'pending', 'not_sent')).toEqual({ pending: 0, not_sent: 3 });
	expect(await events(id)).toEqual([]);
	await transition(runner.context, id, ['paused'], 'running', {}, {});
	await ledger.finishIfDone(id);
	expect(await field(id, 'state')).toBe('completed');
	expect(await events(id)).toEqual(['campaign.finished']);
});

test('a sweep turns only claims older than its time unknown, and can complete the campaign; reconcile resolves only unknowns', async () => {
	const { ledger } = runner.context;
	const id = await newCampaign(3);
	for (const index of [0, 1, 2]) await ledger.claim(id, index, `attempt-${index}`);
	expect(await ledger.settle(id, 2, 'attempt-2', 'sent', 'msg-2', '', 10)).toBe('ok');
	// Claims touched after the sweep's time belong to live attempts.
	expect(await ledger.expireClaims(id, Date.now() - 60_000, [0, 1, 2])).toBe(0);
	expect(await outcomes(id, 3)).toEqual(['claimed', 'claimed', 'sent']);
	const staleBefore = Date.now() + 1;
	expect(await ledger.expireClaims(id, staleBefore, [0, 1, 2])).toBe(2);
	expect(await ledger.expireClaims(id, staleBefore, [0, 1, 2])).toBe(0);
	expect((await ledger.read(id, 0, 1))[0]).toMatchObject({
		outcome: 'unknown',
		ref: 'attempt-0',
		error: expect.stringMatching(/crash or stall/),
	});
	expect(await counts(id, 'claimed', 'unknown', 'sent')).toEqual({ claimed: 0, unknown: 2, sent: 1 });
	// Nothing open any more: the sweep completed it.
	expect(await field(id, 'state')).toBe('completed');
	expect(await events(id)).toEqual(['campaign.finished']);

	// The attempt that held a swept claim may still prove it sent; nothing else settles an unknown.
	expect(await ledger.settle(id, 1, 'attempt-1', 'failed', '', 'HTTP 400', 10)).toBe('lost');

	// Reconcile: what the service has is sent (with its message id), what it lacks is not sent.
	expect(await ledger.resolveUnknown(id, 9, 'sent', 'msg-9', '')).toBe(false);
	expect(await ledger.resolveUnknown(id, 2, 'not_sent', '', 'not found')).toBe(false);
	expect(await ledger.resolveUnknown(id, 0, 'sent', 'msg-0', 'found in the service')).toBe(true);
	expect(await ledger.resolveUnknown(id, 1, 'not_sent', '', 'not in the service')).toBe(true);
	expect(await ledger.resolveUnknown(id, 1, 'sent', 'msg-1', '')).toBe(false);
	expect((await ledger.read(id, 0, 3)).map((record) => [record?.outcome, record?.ref, record?.error])).toEqual([
		['sent', 'msg-0', 'found in the service'],
		['not_sent', 'attempt-1', 'not in the service'],
		['sent', 'msg-2', ''],
	]);
	expect(await counts(id, 'unknown', 'sent', 'not_sent')).toEqual({ unknown: 0, sent: 2, not_sent: 1 });
	expect(await events(id)).toEqual(['campaign.finished']);
	// Retried (not sent -> pending): the old claim token goes, the reason stays.
	expect(await ledger.moveMany(id, 'not_sent', 'pending', [1])).toBe(1);
	expect((await ledger.read(id, 1, 1))[0]).toMatchObject({ outcome: 'pending', ref: '', error: 'not in the service' });
});

test('an attempt whose claim a sweep turned unknown proves it sent with its token', async () => {
	const { ledger } = runner.context;
	const id = await newCampaign(2);
	await ledger.claim(id, 0, 'attempt-0');
	expect(await ledger.expireClaims(id, Date.now() + 1, [0])).toBe(1);
	expect(await ledger.settle(id, 0, 'attempt-other', 'sent', 'msg-x', '', 10)).toBe('lost');
	expect(await ledger.settle(id, 0, 'attempt-0', 'sent', 'msg-0', '', 10)).toBe('ok');
	expect((await ledger.read(id, 0, 1))[0]).toMatchObject({ outcome: 'sent', ref: 'msg-0' });
	expect(await counts(id, 'unknown', 'sent', 'pending')).toEqual({ unknown: 0, sent: 1, pending: 1 });
});
