/**
 * A campaign's state changes, raced directly against real Redis: many callers making the same
 * change at the same instant (as several runner processes do) make it once, and exactly one event
 * lands in the outbox for it. No runner process runs here, so the outbox is read as the Lua
 * scripts left it, before any dispatcher could move it.
 */
import { cancelCampaign, failCampaign } from '../../runner/src/campaigns/control';
import { transition } from '../../runner/src/campaigns/state';
import { decodeRecipient } from '../../runner/src/campaigns/schema';
import { counterField, type Outcome } from '../../runner/src/ledger';
import type { OutboxEntry } from '../../runner/src/webhooks/events';
import { useRunnerUnderTest, inlineCampaign } from './support';

jest.setTimeout(60_000);

const runner = useRunnerUnderTest();
const RACERS = 25;

async function newCampaign(recipients = 30): Promise<string> {
	return inlineCampaign(runner, recipients, '4915190');
}

async function outbox(campaign: string): Promise<OutboxEntry[]> {
	const entries = await runner.context.redis.lrange(runner.context.keys.outbox(runner.business.phoneNumbers[0]), 0, -1);
	return entries
		.map((text) => JSON.parse(text) as OutboxEntry)
		.filter((entry) => entry.id.startsWith(`ev-${campaign}-`));
}

test(`${RACERS} simultaneous pauses: one changes the state, one campaign.paused; a pause of a paused campaign emits nothing`, async () => {
	const id = await newCampaign();
	const results = await Promise.all(
		Array.from({ length: RACERS }, () =>
			transition(
				runner.context,
				id,
				['running', 'scheduled'],
				'paused',
				{ last_error: 'paused' },
				{ event: 'campaign.paused' },
			),
		),
	);
	expect(results.filter((result) => result.changed)).toHaveLength(1);
	expect(
		results.filter((result) => !result.changed).every((result) => !result.changed && result.state === 'paused'),
	).toBe(true);
	const events = await outbox(id);
	expect(events.map((event) => event.type)).toEqual(['campaign.paused']);

	const again = await transition(
		runner.context,
		id,
		['running', 'scheduled'],
		'paused',
		{},
		{ event: 'campaign.paused' },
	);
	expect(again).toEqual({ changed: false, state: 'paused' });
	expect(await outbox(id)).toHaveLength(1);
});

test(`${RACERS} simultaneous cancels and fails: one end, one campaign.finished with final counts, every recipient moved once`, async () => {
	const id = await newCampaign(40);
	const settled = await Promise.allSettled([
		...Array.from({ length: RACERS }, () => cancelCampaign(runner.context, id)),
		...Array.from({ length: 5 }, () => failCampaign(runner.context, id, 'HTTP 401')),
	]);
	expect(settled.some((result) => result.status === 'fulfilled')).toBe(true);
	const events = await outbox(id);
	expect(events.map((event) => event.type)).toEqual(['campaign.finished']);
	const data = Object.fromEntries(
		events[0].hash.flatMap((value, i, all) => (i % 2 === 0 ? [[value, all[i + 1]]] : [])),
	);
	expect(['cancelled', 'failed']).toContain(data.state);
	const count = (outcome: Outcome) => Number(data[counterField(outcome)] ?? 0);
	expect({ moved: count('cancelled') + count('not_sent'), pending: count('pending') }).toEqual({
		moved: 40,
		pending: 0,
	});
});

test("a claim brings the recipient's snapshot row; a settle counts a 429's hold in the same step, a lost settle counts nothing", async () => {
	const { ledger, redis, keys } = runner.context;
	const id = await newCampaign(3);
	const claim = await ledger.claim(id, 1, 'attempt-1');
	expect(claim.outcome).toBe('claimed');
	expect(claim.outcome === 'claimed' && decodeRecipient(claim.row ?? '')).toMatchObject({
		phone: '491519000001',
		variables: { 1: 'R1' },
	});
	expect(await ledger.claim(id, 1, 'attempt-2')).toEqual({ outcome: 'unknown' });

	expect(await ledger.claim(id, 2, 'attempt-1')).toMatchObject({ outcome: 'claimed' });
	expect(await ledger.settle(id, 2, 'attempt-1', 'pending', '', '429 rate limited', 10, 'holds')).toBe('ok');
	expect(await ledger.settle(id, 2, 'attempt-1', 'pending', '', '429 rate limited', 10, 'holds')).toBe('lost');
	expect(
		await redis.hmget(keys.campaign(runner.business.phoneNumbers[0], id), 'holds', 'retries', counterField('pending')),
	).toEqual(['1', null, '2']);
});
