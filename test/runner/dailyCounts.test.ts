/**
 * A sending number's daily counts (#35): the settle counts each recipient sent or refused on its
 * day (UTC), in the same step as the outcome, both settle scripts alike; the last 8 days are kept
 * and shown, older days are dropped by the next day's first count; the API shows them.
 */
import { dailyCounts } from '../../runner/src/core/audience';
import { dailyCountsOf } from '../../runner/src/audience/dailyCounts';
import { startApi, useRunnerUnderTest, inlineCampaign } from './support';

jest.setTimeout(60_000);

const runner = useRunnerUnderTest();
const DAY = 86_400_000;
/** Noon of a day, so no count sits on a day's edge. */
const NOON = Date.UTC(2026, 10, 20, 12);
let campaigns = 0;

async function newCampaign(recipients: number): Promise<string> {
	return inlineCampaign(runner, recipients, `49153${String(campaigns++).padStart(2, '0')}`);
}

/** Claims and settles recipient `index` as if at `at` (the settle reads the process's clock). */
async function settleAt(id: string, index: number, to: 'sent' | 'failed' | 'pending', at: number, viaPlace = false) {
	const { ledger } = runner.context;
	const token = `t-${id}-${index}-${at}`;
	expect(await ledger.claim(id, index, token)).toMatchObject({ outcome: 'claimed' });
	const clock = jest.spyOn(Date, 'now').mockReturnValue(at);
	try {
		if (viaPlace && to !== 'pending')
			await ledger.settleAndPlace(id, token, [{ index, to, ref: to === 'sent' ? `m-${index}` : '', error: '' }], 100, {
				end: index + 1,
				room: 0,
				volleyMs: 0,
				place: true,
			});
		else await ledger.settle(id, index, token, to, to === 'sent' ? `m-${index}` : '', '', 100);
	} finally {
		clock.mockRestore();
	}
}

test('each recipient sent or refused counts once on its day, by both settles; pending again counts nothing', async () => {
	const from = runner.business.phoneNumbers[0];
	const id = await newCampaign(6);
	await settleAt(id, 0, 'sent', NOON);
	await settleAt(id, 1, 'sent', NOON + 1000, true);
	await settleAt(id, 2, 'failed', NOON + 2000, true);
	await settleAt(id, 3, 'pending', NOON + 3000);
	await settleAt(id, 4, 'sent', NOON + DAY);
	await settleAt(id, 5, 'failed', NOON + DAY);

	// Read as of the test's last day (the core's view is of today's clock).
	const shown = await dailyCountsOf(runner.context, from, NOON + DAY);
	expect(shown.from).toBe(from);
	expect(shown.days).toHaveLength(8);
	expect(shown.days.slice(0, 3)).toEqual([
		{ date: '2026-11-21', sent: 1, failed: 1 },
		{ date: '2026-11-20', sent: 2, failed: 1 },
		{ date: '2026-11-19', sent: 0, failed: 0 },
	]);
});

test('the last 8 days are kept: a later day drops the older ones, and the hash expires with the number idle', async () => {
	const from = runner.business.phoneNumbers[0];
	const key = runner.context.keys.dailyCounts(from);
	const id = await newCampaign(3);
	await settleAt(id, 0, 'sent', NOON + 2 * DAY);
	await settleAt(id, 1, 'sent', NOON + 10 * DAY);
	const fields = await runner.context.redis.hkeys(key);
	const days = fields.map((field) => Number(field.split(':')[0]));
	expect(Math.min(...days)).toBeGreaterThan(Math.floor((NOON + 10 * DAY) / DAY) - 8);
	expect(await runner.context.redis.ttl(key)).toBeGreaterThan(7 * 86_400);
	const shown = await dailyCountsOf(runner.context, from, NOON + 10 * DAY);
	expect(shown.days[0]).toEqual({ date: '2026-11-30', sent: 1, failed: 0 });
	expect(shown.days.every((day, i) => i === 0 || (day.sent === 0 && day.failed === 0))).toBe(true);
});

test('a number that is not one is refused naming the field', async () => {
	await expect(dailyCounts(runner.context, 'not-a-number', { from: 'from' })).rejects.toThrow(/^from /);
});

test("the API shows a number's daily counts, today first, and names the field of a wrong number", async () => {
	const token = 'daily-test-token-0123456789';
	const base = await startApi(runner, { RUNNER_TOKEN: token });
	// A number no campaign here sends from: the API's process starts workers, which send the pending
	// recipients of the campaigns above today, on the first number.
	const from = runner.business.phoneNumbers[1];
	const today = Math.floor(Date.now() / DAY);
	await runner.context.redis.hset(runner.context.keys.dailyCounts(from), {
		[`${today}:s`]: 3,
		[`${today}:f`]: 1,
		[`${today - 1}:s`]: 2,
	});
	const get = async (path: string) => {
		const response = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
		return { status: response.status, json: (await response.json()) as Record<string, unknown> };
	};
	const answer = await get(`/api/numbers/+${from}/daily`);
	expect(answer.status).toBe(200);
	expect(answer.json.from).toBe(from);
	const days = answer.json.days as { date: string; sent: number; failed: number }[];
	expect(days).toHaveLength(8);
	expect(days.slice(0, 3)).toEqual([
		{ date: new Date(today * DAY).toISOString().slice(0, 10), sent: 3, failed: 1 },
		{ date: new Date((today - 1) * DAY).toISOString().slice(0, 10), sent: 2, failed: 0 },
		{ date: new Date((today - 2) * DAY).toISOString().slice(0, 10), sent: 0, failed: 0 },
	]);
	expect(await get('/api/numbers/12/daily')).toEqual({
		status: 400,
		json: expect.objectContaining({ field: 'from', message: expect.stringMatching(/^from /) }),
	});
});
