/**
 * Deleting a finished campaign (`DELETE /api/campaigns/:id`, `campaign delete`), over a running
 * `convo-runner start` and the sandbox: every key of the campaign goes from Redis (its recipients,
 * ledger, report, rate ticks, phone index, send-window lists, the cap's waiting set, its delivery
 * tracking and the due checks it had in its number's schedule) and it leaves every list, while
 * another campaign on the same number keeps all of its own. A campaign that may still send is
 * refused and keeps everything; a delete a crash cut short after its Redis step is finished by the
 * next one.
 */
import { deletionKeys } from '../../runner/src/campaigns/deletion';
import type { RedisConnection } from '../../runner/src/redis';
import { redisScript } from '../../runner/src/redisScripts';
import { createCampaign } from '../../runner/src/core/campaigns';
import {
	apiCaller,
	positionalTemplate,
	runCli,
	startApi,
	useRunnerUnderTest,
	waitFor,
	writeRecipientsCsv,
} from './support';

jest.setTimeout(180_000);

const TOKEN = 'test-token-deletion-0123456789';
// Delivery checks due long after the sends: at the deletes, the campaigns' checks wait in the schedule.
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN, RUNNER_TRACKING_SCHEDULE: '10m,20m' });
let base = '';
beforeAll(async () => {
	base = await startApi(runner);
});
const call = apiCaller(() => base, TOKEN);

const rowsOf = (seed: number, count: number) =>
	Array.from({ length: count }, (_, i) => ({
		phone: `+4916${String(seed).padStart(3, '0')}${String(i).padStart(6, '0')}`,
		1: `Customer ${i}`,
		2: `order ${i}`,
	}));
const settings = (number = 0) => ({
	template_id: positionalTemplate(runner.business).id,
	from: runner.business.phoneNumbers[number],
	rate: 50,
});

/** Every key under the runner's prefix that names `id`. */
async function keysNaming(redis: RedisConnection, id: string): Promise<string[]> {
	const found: string[] = [];
	let cursor = '0';
	do {
		const [next, keys] = await redis.scan(cursor, 'MATCH', `${runner.env.RUNNER_PREFIX}:*${id}*`, 'COUNT', 1000);
		cursor = next;
		found.push(...keys);
	} while (cursor !== '0');
	return found.sort();
}

/** The number's scheduled delivery checks of campaign `id`. */
async function dueChecksOf(number: string, id: string): Promise<string[]> {
	const members = await runner.context.redis.zrange(runner.context.keys.trackDue(number), 0, -1);
	return members.filter((member) => member.startsWith(`${id}:`));
}

async function createAndFinish(body: Record<string, unknown>): Promise<string> {
	const created = await call('POST', '/api/campaigns', body);
	expect(created.status).toBe(201);
	const id = created.json.id as string;
	await waitFor(`campaign ${id} to complete`, async () => {
		const got = await call('GET', `/api/campaigns/${id}`);
		return got.json.state === 'completed';
	});
	return id;
}

test('a completed campaign with a send window, delivery tracking and due checks: deleted, no key of it is left and it is in no list; the campaign beside it keeps everything', async () => {
	const number = runner.business.phoneNumbers[0];
	const kept = await createAndFinish({ ...settings(), recipients: rowsOf(1, 4) });
	const gone = await createAndFinish({ ...settings(), recipients: rowsOf(2, 5), window: '00:00-24:00' });
	// Tracking scheduled the sent messages' checks (each campaign's own records and due checks).
	await waitFor('both campaigns to have their delivery checks scheduled', async () => {
		return (await dueChecksOf(number, gone)).length === 5 && (await dueChecksOf(number, kept)).length === 4;
	});
	const before = await keysNaming(runner.context.redis, gone);
	expect(before).toEqual(
		expect.arrayContaining(
			['', ':rcp', ':ledger', ':ticks', ':phones', ':zones', ':trk'].map(
				(suffix) => runner.context.keys.campaign(number, gone) + suffix,
			),
		),
	);
	const keptKeys = await keysNaming(runner.context.redis, kept);

	const deleted = await call('DELETE', `/api/campaigns/${gone}`);
	expect(deleted.status).toBe(200);
	expect(deleted.json).toEqual({ id: gone, deleted: true });

	expect(await keysNaming(runner.context.redis, gone)).toEqual([]);
	expect(await dueChecksOf(number, gone)).toEqual([]);
	expect((await call('GET', `/api/campaigns/${gone}`)).status).toBe(404);
	const listed = (await call('GET', '/api/campaigns?limit=500')).json.items as Array<{ id: string }>;
	expect(listed.map((item) => item.id)).toEqual([kept]);
	const { keys, redis } = runner.context;
	expect(await redis.zscore(keys.campaigns, gone)).toBeNull();
	expect(await redis.hget(keys.homes, gone)).toBeNull();
	expect(await redis.sismember(keys.tracking(number), gone)).toBe(0);

	// The other campaign: every key, its due checks and its report as they were.
	expect(await keysNaming(runner.context.redis, kept)).toEqual(keptKeys);
	expect(await dueChecksOf(number, kept)).toHaveLength(4);
	const report = await call('GET', `/api/campaigns/${kept}/report?format=json`);
	expect(report.status).toBe(200);
	expect(report.json).toHaveLength(4);

	// Gone for good: a second delete finds nothing.
	expect((await call('DELETE', `/api/campaigns/${gone}`)).status).toBe(404);
});

test('a cancelled campaign whose recipients waited out the frequency cap: its waiting set goes too; a campaign that may still send is refused and keeps everything', async () => {
	const number = 1;
	const from = runner.business.phoneNumbers[number];
	expect((await call('PUT', `/api/numbers/${from}/cap`, { policy: '1/24h' })).status).toBe(200);
	const rows = rowsOf(3, 2);
	await createAndFinish({ ...settings(number), recipients: rows });
	// The same phones again, waiting out the cap: the campaign runs, its recipients in its waiting set.
	const waiting = await call('POST', '/api/campaigns', {
		...settings(number),
		recipients: rows,
		when_capped: 'wait',
		rate: 1,
	});
	expect(waiting.status).toBe(201);
	const id = waiting.json.id as string;
	const capwait = runner.context.keys.capWaiting(from, id);
	await waitFor('the recipients to wait out the cap', async () => (await runner.context.redis.zcard(capwait)) === 2);

	const refused = await call('DELETE', `/api/campaigns/${id}`);
	expect(refused.status).toBe(400);
	expect(refused.json.message).toBe(
		`Campaign ${id} is running; it can be deleted only when completed or cancelled or failed (cancel it first)`,
	);
	expect(await runner.context.redis.zcard(capwait)).toBe(2);
	expect((await call('GET', `/api/campaigns/${id}`)).json.state).toBe('running');
	// The Redis step checks the state itself (a resume or a retry may come between the read and the step).
	const { keys, redis } = runner.context;
	expect(await redisScript(redis, 'deleteCampaign')(deletionKeys(keys, from, id), [id])).toBe('running');
	expect(await redis.zcard(capwait)).toBe(2);

	expect((await call('POST', `/api/campaigns/${id}/cancel`, {})).status).toBe(200);
	await waitFor('the cancel to finish', async () => (await redis.sismember(keys.finishing(from), id)) === 0);
	// Cancelled but still moving its pending recipients (as when a send was in flight at the cancel): not yet.
	await redis.sadd(keys.finishing(from), id);
	const finishing = await call('DELETE', `/api/campaigns/${id}`);
	expect([finishing.status, finishing.json.message]).toEqual([
		409,
		`Campaign ${id} is still moving its pending recipients to their end; try again`,
	]);
	expect(await redis.zcard(capwait)).toBe(2);
	await redis.srem(keys.finishing(from), id);
	expect((await call('DELETE', `/api/campaigns/${id}`)).status).toBe(200);
	expect(await keysNaming(runner.context.redis, id)).toEqual([]);
});

test('a failed campaign (its template unknown to the service) is deleted as a completed one is', async () => {
	const created = await call('POST', '/api/campaigns', {
		...settings(),
		template_id: '00000000-0000-4000-8000-000000000000',
		recipients: rowsOf(5, 2),
	});
	expect(created.status).toBe(201);
	const id = created.json.id as string;
	await waitFor(
		'the campaign to fail',
		async () => (await call('GET', `/api/campaigns/${id}`)).json.state === 'failed',
	);
	await waitFor('its end to finish', async () => {
		const got = await call('DELETE', `/api/campaigns/${id}`);
		return got.status === 200 ? got : undefined;
	});
	expect(await keysNaming(runner.context.redis, id)).toEqual([]);
});

test('a delete cut short after its Redis step (the lists not yet left) is finished by the next; the CLI deletes and says so', async () => {
	const number = runner.business.phoneNumbers[2];
	const id = await createAndFinish({ ...settings(2), recipients: rowsOf(4, 2) });
	await waitFor('its delivery checks to be scheduled', async () => (await dueChecksOf(number, id)).length === 2);
	const { keys, redis } = runner.context;
	// The first step alone, as a process killed before it left the lists would have done it.
	// As if its create's listing had lagged behind its commit (keyGroups.ts): the feeder would list it again.
	await redis.zadd(keys.unlisted(number), Date.now(), id);
	const step = await redisScript(redis, 'deleteCampaign')(deletionKeys(keys, number, id), [id]);
	expect(step).toBe('deleted');
	expect(await redis.zscore(keys.unlisted(number), id)).toBeNull();
	expect(await redis.zscore(keys.campaigns, id)).not.toBeNull();
	// Its tracking records wait aside for their due checks to be taken out.
	expect(await redis.exists(keys.trackedAside(number, id))).toBe(1);
	// Should no delete come again, they expire: a day.
	expect(await redis.ttl(keys.trackedAside(number, id))).toBeGreaterThan(86_000);

	const cli = await runCli(['campaign', 'delete', id], { ...runner.env, LOG_LEVEL: 'warn' });
	expect([cli.code, cli.stdout.trim()]).toEqual([0, `${id}: deleted`]);
	expect(await keysNaming(redis, id)).toEqual([]);
	expect(await dueChecksOf(number, id)).toEqual([]);
	expect(await redis.zscore(keys.campaigns, id)).toBeNull();
	const again = await runCli(['campaign', 'delete', id], { ...runner.env, LOG_LEVEL: 'warn' });
	expect(again.code).toBe(1);
	expect(again.stderr).toContain(`No campaign with id ${id}`);
});

test("a cron schedule's id is not a campaign's: the delete says so and how a schedule goes, and the schedule stays", async () => {
	const created = await createCampaign(runner.context, {
		templateId: positionalTemplate(runner.business).id,
		from: runner.business.phoneNumbers[0],
		source: writeRecipientsCsv(1, { seed: 6 }).path,
		cron: '0 0 1 1 *',
	});
	if (created.kind !== 'schedule') throw new Error('expected a schedule');
	const id = created.schedule.id;
	const refused = await call('DELETE', `/api/campaigns/${id}`);
	expect(refused.status).toBe(404);
	expect(refused.json.message).toBe(
		`No campaign with id ${id}: it is a cron schedule, removed with \`campaign cancel ${id}\` or ` +
			`DELETE /api/campaigns/schedules/${id} (the campaigns it made stay, each deleted by its own id)`,
	);
	const cli = await runCli(['campaign', 'delete', id], { ...runner.env, LOG_LEVEL: 'warn' });
	expect(cli.code).toBe(1);
	expect(cli.stderr).toContain(`it is a cron schedule, removed with \`campaign cancel ${id}\``);
	const listed = async () =>
		((await call('GET', '/api/campaigns/schedules')).json.schedules as Array<{ id: string }>).map((s) => s.id);
	expect(await listed()).toContain(id);
	expect((await call('DELETE', `/api/campaigns/schedules/${id}`)).status).toBe(200);
	expect(await listed()).not.toContain(id);
});
