/**
 * Dry runs of a create (#23): the API's `dry_run: true` (JSON, and `dry_run=true` in the query of
 * an upload) and the CLI's `--dry-run` in a process of its own, over a running `convo-runner
 * start` and the sandbox. A dry run checks every row as the create does (its counts and reasons
 * equal those of a real create of the same file made afterwards), stores nothing (every campaign
 * key in Redis as it was; no campaign listed) and sends nothing (the sandbox's request counts
 * unchanged), and its answer is never kept for an Idempotency-Key.
 */
import { readFileSync, writeFileSync } from 'node:fs';

import { addSuppression, setCap } from '../../runner/src/core/audience';
import { FEED_EVERY_MS, TRACK_EVERY_MS } from '../../runner/src/jobs';
import {
	positionalTemplate,
	scanKeys,
	runCli,
	sendsByPhone,
	startApi,
	templateSends,
	useRunnerUnderTest,
	waitFor,
	writeRecipientsCsv,
} from './support';

jest.setTimeout(180_000);

const TOKEN = 'test-token-0123456789abcdef';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN });
let base = '';

beforeAll(async () => {
	base = await startApi(runner);
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

async function call(
	method: string,
	path: string,
	body?: unknown,
	headers: Record<string, string> = {},
): Promise<{ status: number; json: Json }> {
	const raw = body as { raw?: string; type?: string } | undefined;
	const upload = raw?.raw !== undefined;
	const response = await fetch(`${base}${path}`, {
		method,
		headers: {
			authorization: `Bearer ${TOKEN}`,
			...(body === undefined ? {} : { 'content-type': upload ? (raw?.type as string) : 'application/json' }),
			...headers,
		},
		body: body === undefined ? undefined : upload ? raw?.raw : JSON.stringify(body),
	});
	const text = await response.text();
	return { status: response.status, json: text ? JSON.parse(text) : undefined };
}

/** 12 good rows, 3 repeats of earlier phones, 3 bad phones and a row without its phone. */
function mixedCsv(seed: number): { path: string; text: string } {
	const { path, phones } = writeRecipientsCsv(12, { seed, extraLines: [] });
	const extra = [
		`+${phones[2]},Again,x`,
		`+${phones[5]},Again,y`,
		`+${phones[5]},Thrice,z`,
		'12,Short,a',
		'not-a-phone,Bad,b',
		'+1,Tiny,c',
		',Nobody,d',
	];
	const text = `${readFileSync(path, 'utf8')}${extra.join('\n')}\n`;
	writeFileSync(path, text);
	return { path, text };
}

const settings = () => ({
	template_id: positionalTemplate(runner.business).id,
	from: runner.business.phoneNumbers[0],
	rate: 4,
});
const uploadQuery = (extra: Record<string, string> = {}) =>
	new URLSearchParams({ ...settings(), rate: '4', ...extra }).toString();

/** The sandbox's request counts (every call it received, per operation). */
async function sandboxCounts(): Promise<unknown> {
	return ((await (await fetch(`${runner.sandbox.baseUrl}/__sandbox/requests`)).json()) as { counts: unknown }).counts;
}

/**
 * The campaign data in Redis as text (every key and its value, sorted), without what a runner
 * process rewrites by itself every second whatever is asked of it: BullMQ's queues (whose job keys
 * come and go between a scan and a read), its own heartbeat, the leases its background loops take
 * and let go (feeder, delivery tracking, outbox), and tracking's clock and how far it looked for new
 * campaigns.
 */
/**
 * The stored data once the runner's work after a campaign (tracking's enrolment, the outbox, a
 * number's copy of the suppression list let go) has stopped changing it: two reads a tick of the
 * slower of the ticks that do that work apart agree.
 */
async function settledData(): Promise<string> {
	let last = await storedData();
	return waitFor(
		'the stored data to stop changing',
		async () => {
			await new Promise((resolve) => setTimeout(resolve, Math.max(FEED_EVERY_MS, TRACK_EVERY_MS)));
			const now = await storedData();
			if (now === last) return now;
			last = now;
			return undefined;
		},
		30_000,
		0,
	);
}

async function storedData(): Promise<string> {
	const { redis } = runner.context;
	const prefix = runner.env.RUNNER_PREFIX as string;
	const keys = (await scanKeys(redis, prefix)).filter((key) => {
		const name = key.slice(prefix.length + 1);
		return (
			!/^(control|events|reindex|send|tracking)-\{/.test(name) &&
			!/:runners?(:|$)|:lock:(feeder|tracking|outbox)$|:trk(seen|gate)$/.test(name) &&
			// A number's start log expires on its own 2 s after its last start: an earlier campaign's can
			// go while a dry run is checked on a loaded machine.
			!/:starts$/.test(name)
		);
	});
	const pairs: string[] = [];
	for (const key of keys.sort()) {
		const type = await redis.type(key);
		const value =
			type === 'string'
				? await redis.get(key)
				: type === 'hash'
					? await redis.hgetall(key)
					: type === 'set'
						? (await redis.smembers(key)).sort()
						: type === 'zset'
							? await redis.zrange(key, 0, -1, 'WITHSCORES')
							: type === 'list'
								? await redis.lrange(key, 0, -1)
								: type === 'stream'
									? await redis.xrange(key, '-', '+')
									: type;
		pairs.push(`${key} ${JSON.stringify(value)}`);
	}
	return pairs.join('\n');
}

test('JSON dry_run: true with a start time, a test phone and a repeat across the rows: the estimate starts at `at`, no test is sent, nothing stored; settings are refused as a real create refuses them', async () => {
	const at = new Date(Date.now() + 3600_000).toISOString();
	const recipients = [
		{ phone: '+4917011000001', 1: 'a', 2: 'b' },
		{ phone: '+4917011000002', 1: 'a', 2: 'b' },
		{ phone: '4917011000001', 1: 'again', 2: 'b' },
		{ phone: '+4917011000003', 1: 'a', 2: 'b', buttons: 'nope' },
	];
	const keysBefore = await storedData();
	const requestsBefore = await sandboxCounts();
	const dry = await call('POST', '/api/campaigns', {
		...settings(),
		rate: 1,
		at,
		test_to: '+4917099999999',
		recipients,
		dry_run: true,
	});
	expect(dry.status).toBe(200);
	expect(dry.json).toMatchObject({
		kind: 'dry_run',
		counts: { accepted: 2, rejected: 2 },
		estimate: { rate: 1, seconds: 2, starts_at: at },
		test_send: { to: '4917099999999', sent: false },
	});
	expect(dry.json.rejections.map((r: { line: number }) => r.line)).toEqual([3, 4]);
	expect(await storedData()).toBe(keysBefore);
	expect(await sandboxCounts()).toEqual(requestsBefore);

	// A cron schedule's dry run reads its source now and says when the next run is.
	// Bad settings: the dry run's answer is the real create's, word for word.
	for (const bad of [
		{ template_id: 'nope' },
		{ from: '12' },
		{ rate: 0 },
		{ at: 'tomorrow' },
		{ tz: 'Europe/Berlin' },
		{ test_to: 'x' },
	]) {
		const dryBad = await call('POST', '/api/campaigns', { ...settings(), recipients, ...bad, dry_run: true });
		const realBad = await call('POST', '/api/campaigns', { ...settings(), recipients, ...bad });
		expect([bad, dryBad.status]).toEqual([bad, 400]);
		expect(dryBad.json).toEqual(realBad.json);
	}
	const badCron = { ...settings(), source_url: 'http://127.0.0.1:1/none.csv', cron: '61 * * * *' };
	const cron = await call('POST', '/api/campaigns', { ...badCron, dry_run: true });
	expect(cron.status).toBe(400);
	expect(JSON.stringify(cron.json)).toMatch(/cron \\"61 \* \* \* \*\\" with tz \\"UTC\\" is not a valid schedule/);
	expect(cron.json).toEqual((await call('POST', '/api/campaigns', badCron)).json);
	const draft = await call('POST', '/api/campaigns', { ...settings(), draft: true, dry_run: true });
	expect(draft.status).toBe(400);
	expect(JSON.stringify(draft.json)).toMatch(/dry_run does not go with a draft/);
	expect(await storedData()).toBe(keysBefore);
});

test('CLI --dry-run in a process of its own: readable text, complete --json, a test phone a rule would refuse named, exit 0, nothing stored or sent', async () => {
	const { path } = mixedCsv(2);
	const keysBefore = await storedData();
	const requestsBefore = await sandboxCounts();
	const campaignsBefore = (await call('GET', '/api/campaigns')).json.total;
	const args = [
		'campaign',
		'create',
		'--template',
		settings().template_id,
		'--from',
		settings().from,
		'--recipients',
		path,
		'--rate',
		'4',
		'--dry-run',
	];
	const env = { ...runner.env, LOG_LEVEL: 'warn' };
	const human = await runCli(args, env);
	expect(human.code).toBe(0);
	expect(human.stdout).toContain('dry run: nothing was stored or sent');
	expect(human.stdout).toContain('19 rows: 12 accepted, 7 rejected');
	expect(human.stdout).toMatch(
		/reasons:\n {2}3 rejected: phone is already in this campaign \(line 4\) \(and others that differ only in a number\)/,
	);
	expect(human.stdout).toMatch(
		/first rejected rows:\n {2}line 14 \(\+491700\d+\): phone is already in this campaign \(line 4\)/,
	);
	expect(human.stdout).toMatch(/estimated duration: 3 s at 4 sends\/s, from \S+, until about \S+/);
	expect(human.stdout).not.toContain('{"level"');

	const json = await runCli([...args, '--json'], env);
	expect(json.code).toBe(0);
	const answer = JSON.parse(json.stdout);
	expect(answer).toMatchObject({
		kind: 'dry_run',
		dry_run: true,
		total: 19,
		counts: { accepted: 12, rejected: 7 },
		estimate: { rate: 4, seconds: 3 },
	});
	expect(answer.rejections).toHaveLength(7);
	expect(answer.reasons.reduce((sum: number, group: { count: number }) => sum + group.count, 0)).toBe(7);

	// A test phone a rule would refuse (a window closed in Germany now): the dry run says which, counting nothing.
	const berlinHour = Number(
		new Intl.DateTimeFormat('en-US', { timeZone: 'Europe/Berlin', hour: '2-digit', hourCycle: 'h23' }).format(
			new Date(),
		),
	);
	const opens = (berlinHour + 12) % 24;
	const closed = `${String(opens).padStart(2, '0')}:00-${String(opens + 1).padStart(2, '0')}:00`;
	const tested = await runCli([...args, '--test-to', '4916099000001', '--window', closed], env);
	expect(tested.code).toBe(0);
	expect(tested.stdout).toMatch(
		/test send to 4916099000001: not sent \(a dry run sends no test\); the create would refuse it: outside the campaign's send window \(\d\d:00-\d\d:00\) in the test phone's time zone/,
	);

	expect(await storedData()).toBe(keysBefore);
	expect(await sandboxCounts()).toEqual(requestsBefore);
	// A cron schedule: its rows read now, the estimate from its next run.
	const cron = await runCli([...args, '--cron', '0 9 * * *', '--tz', 'Asia/Kolkata', '--json'], env);
	expect(cron.code).toBe(0);
	const next = JSON.parse(cron.stdout).estimate;
	expect(next).toMatchObject({ cron: '0 9 * * *', tz: 'Asia/Kolkata', seconds: 3 });
	// 09:00 in Kolkata is 03:30 UTC, within the coming day.
	expect(next.starts_at).toMatch(/T03:30:00\.000Z$/);
	expect(Date.parse(next.starts_at) - Date.now()).toBeLessThanOrEqual(24 * 3600_000);

	expect(await storedData()).toBe(keysBefore);
	expect(await sandboxCounts()).toEqual(requestsBefore);
	expect((await call('GET', '/api/campaigns')).json.total).toBe(campaignsBefore);
});

// Last: the real create it makes goes on sending, which the other tests' snapshots of Redis would see.
test('an upload with dry_run=true answers the counts, grouped reasons, first rejections and estimate; stores and sends nothing; a real create of the same file afterwards gives the same counts and reasons', async () => {
	const { text } = mixedCsv(1);
	const keysBefore = await storedData();
	const requestsBefore = await sandboxCounts();

	const dry = await call(
		'POST',
		`/api/campaigns?${uploadQuery({ dry_run: 'true' })}`,
		{ raw: text, type: 'text/csv' },
		{ 'idempotency-key': 'dry-upload' },
	);
	expect(dry.status).toBe(200);
	expect(dry.json).toMatchObject({
		kind: 'dry_run',
		dry_run: true,
		total: 19,
		accepted: 12,
		rejected: 7,
		counts: { accepted: 12, rejected: 7 },
	});
	expect(dry.json.id).toBeUndefined();
	expect(dry.json.estimate).toMatchObject({ rate: 4, seconds: 3 });
	expect(Date.parse(dry.json.estimate.ends_at) - Date.parse(dry.json.estimate.starts_at)).toBe(3000);
	// A repeat names the line its phone was first on; the two repeats of line 7 (and the one of line 4) are one group.
	expect(dry.json.rejections[0]).toMatchObject({ line: 14, reason: 'phone is already in this campaign (line 4)' });
	expect(dry.json.reasons).toContainEqual({
		outcome: 'rejected',
		reason: 'phone is already in this campaign (line 4)',
		count: 3,
		varies: true,
	});
	expect(dry.json.reasons.reduce((sum: number, group: { count: number }) => sum + group.count, 0)).toBe(7);

	// Nothing stored, nothing sent, nothing listed; no answer kept for the key (a retry runs again: a real create).
	await new Promise((resolve) => setTimeout(resolve, 1500));
	expect(await storedData()).toBe(keysBefore);
	expect(await sandboxCounts()).toEqual(requestsBefore);
	expect((await call('GET', '/api/campaigns')).json.items).toEqual([]);

	const unclear = await call('POST', `/api/campaigns?${uploadQuery({ dry_run: 'yes' })}`, {
		raw: text,
		type: 'text/csv',
	});
	expect(unclear.status).toBe(400);
	expect(JSON.stringify(unclear.json)).toContain('dry_run must be true or false');
	expect((await call('GET', '/api/campaigns')).json.items).toEqual([]);

	const real = await call(
		'POST',
		`/api/campaigns?${uploadQuery()}`,
		{ raw: text, type: 'text/csv' },
		{ 'idempotency-key': 'dry-upload' },
	);
	expect(real.status).toBe(201);
	expect(real.json).toMatchObject({
		total: dry.json.total,
		accepted: dry.json.accepted,
		rejected: dry.json.rejected,
		rejections: dry.json.rejections,
		replayed: false,
	});
	const errors = await call('GET', `/api/campaigns/${real.json.id}/errors`);
	expect(errors.json.filter((group: { outcome: string }) => group.outcome === 'rejected')).toEqual(dry.json.reasons);
	await waitFor(
		'the real campaign sent',
		async () => (await call('GET', `/api/campaigns/${real.json.id}`)).json.state === 'completed',
	);
});

test('with the audience rules on (a suppression list, a frequency cap): a dry run counts each row once, suppressed before capped, stores and sends nothing, and the real run ends with those outcomes, counted at the sandbox', async () => {
	const { context } = runner;
	const from = runner.business.phoneNumbers[1];
	await setCap(context, from, '1/24h');
	const { phones } = writeRecipientsCsv(20, { seed: 77 });
	const rows = (list: string[]) => list.map((phone, i) => ({ phone: `+${phone}`, 1: `Customer ${i}`, 2: 'order' }));
	const settingsOn = { template_id: positionalTemplate(runner.business).id, from, rate: 50 };
	const sendsTo = async (wanted: string[]) =>
		(await templateSends(runner.sandbox)).filter((message) => wanted.includes(message.to));

	// The first six phones get a message: the cap then holds them for a day.
	const first = await call('POST', '/api/campaigns', { ...settingsOn, recipients: rows(phones.slice(0, 6)) });
	expect(first.status).toBe(201);
	await waitFor(
		'the first campaign to complete',
		async () => (await call('GET', `/api/campaigns/${first.json.id}`)).json.state === 'completed' || undefined,
		60_000,
	);
	// Suppressed: one of them (suppressed wins: it is not counted capped too) and two others.
	for (const phone of [phones[0], phones[6], phones[7]])
		await addSuppression(context, { phone, source: 'operator' }, 'phone');

	const audience = [...rows(phones), { phone: '12', 1: 'Short', 2: 'x' }, { phone: '', 1: 'Nobody', 2: 'y' }];
	const storedBefore = await settledData();
	const countsBefore = await sandboxCounts();
	const dry = await call('POST', '/api/campaigns', { ...settingsOn, recipients: audience, dry_run: true });
	expect(dry.status).toBe(200);
	expect(dry.json.counts).toEqual({ accepted: 17, rejected: 2, suppressed: 3, capped: 5 });
	expect(await storedData()).toBe(storedBefore);
	expect(await sandboxCounts()).toEqual(countsBefore);

	const real = await call('POST', '/api/campaigns', { ...settingsOn, recipients: audience });
	expect(real.status).toBe(201);
	const done = await waitFor(
		'the real run to complete',
		async () => {
			const view = (await call('GET', `/api/campaigns/${real.json.id}`)).json;
			return view.state === 'completed' ? view : undefined;
		},
		60_000,
	);
	expect(done.counts).toMatchObject({ sent: 12, capped: 5, suppressed: 3, rejected: 2, pending: 0, claimed: 0 });
	// The sandbox got one message for each of the twelve others, and none more to anyone: six from the first campaign, twelve now.
	const fresh = phones.slice(8);
	expect(sendsByPhone(await sendsTo(fresh)).size).toBe(12);
	expect((await sendsTo(fresh)).length).toBe(12);
	expect((await sendsTo(phones.slice(0, 8))).length).toBe(6);
});
