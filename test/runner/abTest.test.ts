/**
 * A/B tests of templates (#37), end to end: real Redis, runner processes, the sandbox with its
 * delivery outcomes set per template so one variant reads better. Counted in the sandbox's log:
 * every phone gets exactly one message, a test phone only its variant's template, a remainder
 * phone only the winner's, with a SIGKILL of one runner process during the test and another
 * during the remainder. A tie with `--if-tie wait` waits until `campaign choose`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { campaignStatus, reconcileCampaign, retryNotSent } from '../../runner/src/core/campaigns';
import { abTestFields, abTestOf, abTestView } from '../../runner/src/campaigns/abTest';
import { encodeRecipient } from '../../runner/src/campaigns/schema';
import { binomialSpread, variantOf } from '../../runner/src/campaigns/variantSplit';
import { createWebhook } from '../../runner/src/webhooks/store';
import { redisScript } from '../../runner/src/redisScripts';
import {
	deliveryOutcomes,
	report,
	runCli,
	sendsByPhone,
	setDelivery,
	setFault,
	templateSends,
	trackingTally,
	useRunnerUnderTest,
	waitFor,
	waitForFeederTick,
	type Business,
	type RunnerUnderTest,
	type SandboxMessage,
} from './support';

jest.setTimeout(360_000);

const CONCURRENCY = 10;
const runner = useRunnerUnderTest({
	RUNNER_CONCURRENCY: String(CONCURRENCY),
	RUNNER_JOB_LOCK: '3s',
	RUNNER_FEEDER_STALL: '3s',
	// Every step within 500 ms of the send: the first check (+1 s) sees each final state, the second closes the rest.
	RUNNER_TRACKING_SCHEDULE: '1s,2500ms',
	RUNNER_TRACKING_RATE: '1000',
	// Signs the events the tie's test receives.
	RUNNER_WEBHOOK_KEY: 'ab-test-webhook-key-0123456789abcdef',
});

/** The fixture's two templates without buttons: positional (1, 2) and named (first_name, order_id). */
function variantsOf(business: Business): [string, string] {
	const byName = (name: string) => {
		const template = business.templates.find((t) => t.name === name);
		if (!template) throw new Error(`fixture has no ${name}`);
		return template.id;
	};
	return [byName('order_update'), byName('welcome_named')];
}

/** A CSV whose rows carry the variables of both variants. */
function writeAbCsv(count: number, seed: number): { path: string; phones: string[] } {
	const phones = Array.from(
		{ length: count },
		(_, i) => `49171${String(seed).padStart(2, '0')}${String(i).padStart(6, '0')}`,
	);
	const lines = [
		'phone,1,2,first_name,order_id',
		...phones.map((phone, i) => `+${phone},Customer ${i},order ${i},Name${i},O-${i}`),
	];
	const path = join(mkdtempSync(join(tmpdir(), 'convo-ab-')), 'recipients.csv');
	writeFileSync(path, `${lines.join('\n')}\n`);
	return { path, phones };
}

const messagingApi = (r: RunnerUnderTest) => ({
	CONVO_BASE_URL: r.sandbox.baseUrl,
	CONVO_ACCESS_TOKEN: r.business.accessToken,
});

interface AbView {
	phase: string;
	seed: string;
	winner?: number;
	chosen_by?: string;
	decide_at: string;
	decided_at?: string;
	split: { test: number[]; remainder: number };
	figures: {
		verdict: string;
		critical_z: number;
		variants: Array<{ variant: number; sent: number; read: number; rate: number; z?: number }>;
	};
}

const abOf = async (id: string) => (await campaignStatus(runner.context, id)).ab_test as unknown as AbView;

/** Each phone's messages as (template id) lists, from the sandbox's own log. */
function templatesByPhone(sends: SandboxMessage[]): Map<string, string[]> {
	return new Map([...sendsByPhone(sends)].map(([phone, list]) => [phone, list.map((m) => m.template?.id ?? '')]));
}

test('two variants at 10% of 2,000: an even, reproducible split; the better-reading variant wins by the rule; the other 1,800 get it; one message per phone across two SIGKILLs', async () => {
	const [first, second] = variantsOf(runner.business);
	const env = { ...runner.env, ...messagingApi(runner) };
	// The second template reads far better; latency keeps sends in flight at each kill.
	await setDelivery(runner.sandbox, {
		seed: 'ab-37',
		delivered: 0.95,
		read: 0.3,
		delays_ms: { sent: 50, delivered: 150, read: 300 },
		templates: { [second]: { delivered: 0.95, read: 0.85 } },
	});
	await setFault(runner.sandbox, { endpoint: 'POST /api/external/v2/send-template', latencyMs: 60 });
	const { path, phones } = writeAbCsv(2000, 37);
	const args = [
		'campaign',
		'create',
		'--from',
		`+${runner.business.phoneNumbers[0]}`,
		'--recipients',
		path,
		'--variant',
		`${first}:1,2`,
		'--variant',
		`${second}:first_name,order_id`,
		'--test-share',
		'10%',
		'--pick-by',
		'read',
		'--decide-after',
		'90s',
		'--rate',
		'100',
		'--json',
	];

	// The dry run prints the seed and the split; the create with that seed splits alike.
	const dry = await runCli([...args, '--dry-run'], env);
	expect(dry.code).toBe(0);
	const dryAnswer = JSON.parse(dry.stdout) as {
		ab_test: { seed: string; split: { test: Array<{ recipients: number }>; remainder: number } };
		estimate: { seconds: number };
	};
	const { seed } = dryAnswer.ab_test;
	const expected = [0, 0, 0];
	for (const phone of phones) expected[(variantOf({ seed, share: 0.1, variants: 2 }, phone) ?? -1) + 1]++;
	expect(dryAnswer.ab_test.split.test.map((v) => v.recipients)).toEqual([expected[1], expected[2]]);
	expect(dryAnswer.ab_test.split.remainder).toBe(expected[0]);
	// Even within the draw's noise: each variant within three standard deviations of 100.
	for (const count of expected.slice(1)) expect(Math.abs(count - 100)).toBeLessThanOrEqual(binomialSpread(2000, 0.05));
	// The estimate: the test's sends, the wait for the decision (90 s at most), then the remainder's at 100/s.
	expect(dryAnswer.estimate.seconds).toBeGreaterThanOrEqual(90 + Math.floor(expected[0] / 100));
	expect(dryAnswer.estimate.seconds).toBeLessThanOrEqual(90 + Math.ceil(2000 / 100));

	const killedInTest = runner.spawnWorker(messagingApi(runner), 'start');
	const created = await runCli([...args, '--seed', seed], env);
	expect(created.code).toBe(0);
	const id = (JSON.parse(created.stdout) as { id: string }).id;

	await waitFor(
		'60 test sends before the first kill',
		async () => (await templateSends(runner.sandbox)).length >= 60,
		60_000,
		50,
	);
	await killedInTest.kill('SIGKILL');
	expect((await abOf(id)).phase).toBe('testing');
	const killedInRemainder = runner.spawnWorker(messagingApi(runner), 'start');

	const decided = await waitFor(
		'the rule to decide',
		async () => {
			const view = await abOf(id);
			return view.phase === 'decided' ? view : undefined;
		},
		120_000,
		250,
	);
	// Nothing of the remainder went out before the decision.
	const testPhones = new Set(
		phones.filter((phone) => variantOf({ seed, share: 0.1, variants: 2 }, phone) !== undefined),
	);
	// With the figures and the tracking records beside the verdict, so a failure says why.
	const seenDecided = {
		winner: decided.winner,
		figures: decided.figures,
		...(await trackingTally(runner.context, id)),
	};
	expect(seenDecided).toEqual({ ...seenDecided, winner: 2 });
	// Decided once every test send's delivery settled, well before decide_after.
	expect(Date.parse(decided.decided_at ?? '')).toBeLessThan(Date.parse(decided.decide_at));
	expect(decided.chosen_by).toBe('rule');
	expect(decided.split).toEqual({ test: [expected[1], expected[2]], remainder: expected[0] });

	await waitFor(
		'600 remainder sends before the second kill',
		async () => (await templateSends(runner.sandbox)).length >= 200 + 600,
		60_000,
		50,
	);
	await killedInRemainder.kill('SIGKILL');
	expect((await campaignStatus(runner.context, id)).counts.pending).toBeGreaterThan(0);
	runner.spawnWorker(messagingApi(runner));

	const done = async () => {
		const status = await campaignStatus(runner.context, id);
		return status.state === 'completed' ? status : undefined;
	};
	await waitFor('the campaign to complete', done, 150_000, 250);
	// Claims the dead processes held are unknown: reconciled from the service's records, those not sent retried.
	await reconcileCampaign(runner.context, id);
	await retryNotSent(runner.context, id);
	const final = await waitFor('the retried campaign to complete', done, 120_000, 250);
	expect(final.counts.sent).toBe(2000);

	const sends = await templateSends(runner.sandbox);
	const byPhone = templatesByPhone(sends);
	expect(sends).toHaveLength(2000);
	expect(new Set(byPhone.keys())).toEqual(new Set(phones));
	const wrong: string[] = [];
	for (const phone of phones) {
		const drawn = variantOf({ seed, share: 0.1, variants: 2 }, phone);
		const want = drawn === undefined ? second : [first, second][drawn];
		const got = byPhone.get(phone) ?? [];
		if (got.length !== 1 || got[0] !== want) wrong.push(`${phone}: ${got.join(',')} (want ${want})`);
	}
	expect(wrong).toEqual([]);
	expect(testPhones.size).toBe(expected[1] + expected[2]);
	// The report's variant column says the same, row by row.
	const rows = await report(runner.context, id);
	const reportWrong = rows.filter((row) => {
		const drawn = variantOf({ seed, share: 0.1, variants: 2 }, row.phone);
		return row.variant !== (drawn === undefined ? 2 : drawn + 1) || row.in_test !== (drawn !== undefined);
	});
	expect(reportWrong).toEqual([]);

	// The figures: variant 2's read rate beats variant 1's beyond the critical z.
	const figures = decided.figures;
	expect(figures.verdict).toBe('winner');
	expect(figures.variants[1].rate).toBeGreaterThan(figures.variants[0].rate);
	expect(figures.variants[0].z).toBeGreaterThan(figures.critical_z);
	const status = await runCli(['campaign', 'status', id], env);
	expect(status.stdout).toContain('A/B test by read rate: decided: variant 2 (by rule)');

	// The remainder's deliveries are tracked too: the campaign's funnel settles on what the sandbox drew for all 2,000.
	const everyone = new Set(phones);
	const drawnRead = (await deliveryOutcomes(runner.sandbox)).filter(
		(outcome) => everyone.has(outcome.to) && outcome.outcome === 'read',
	).length;
	await waitFor(
		'the funnel to settle on every read',
		async () => {
			const funnel = (await campaignStatus(runner.context, id)).funnel;
			return funnel?.settled && funnel.read === drawnRead ? funnel : undefined;
		},
		60_000,
		250,
	);
});

test('a tie with --if-tie wait waits, sending nothing of the remainder, until `campaign choose` sends it the chosen variant', async () => {
	const [first, second] = variantsOf(runner.business);
	const env = { ...runner.env, ...messagingApi(runner) };
	// Equal outcomes: every message of either template is read.
	await setDelivery(runner.sandbox, {
		seed: 'ab-tie',
		delivered: 1,
		read: 1,
		delays_ms: { sent: 50, delivered: 100, read: 200 },
	});
	const before = (await templateSends(runner.sandbox)).length;
	// A receiver of campaign.variant_chosen.
	const events: Array<{ type: string; data: { id: string; ab_test?: Record<string, unknown> } }> = [];
	const receiver = createServer((request, response) => {
		let body = '';
		request.on('data', (chunk) => (body += String(chunk)));
		request.on('end', () => {
			events.push(JSON.parse(body) as (typeof events)[number]);
			response.writeHead(204).end();
		});
	});
	await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
	await createWebhook(runner.context, {
		url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
		events: ['campaign.variant_chosen'],
	});
	const { path, phones } = writeAbCsv(400, 38);
	runner.spawnWorker(messagingApi(runner), 'start');
	const created = await runCli(
		[
			'campaign',
			'create',
			'--from',
			`+${runner.business.phoneNumbers[0]}`,
			'--recipients',
			path,
			'--variant',
			`${first}:1,2`,
			'--variant',
			`${second}`,
			'--test-share',
			'50%',
			'--decide-after',
			'60s',
			'--if-tie',
			'wait',
			'--min-per-variant',
			'20',
			'--rate',
			'200',
			'--json',
		],
		env,
	);
	expect(created.code).toBe(0);
	const id = (JSON.parse(created.stdout) as { id: string }).id;
	const waiting = await waitFor(
		'the tie to wait for the operator',
		async () => {
			const view = await abOf(id);
			return view.phase === 'waiting' ? view : undefined;
		},
		60_000,
		250,
	);
	const seenWaiting = { figures: waiting.figures, ...(await trackingTally(runner.context, id)) };
	expect(seenWaiting).toEqual({ ...seenWaiting, figures: { ...waiting.figures, verdict: 'tie' } });
	const testCount = waiting.split.test[0] + waiting.split.test[1];
	// It stays waiting through two more feeder passes (the decision's and the feeding's): the remainder
	// pending, nothing of it sent, the campaign not complete.
	await waitForFeederTick(runner.context);
	await waitForFeederTick(runner.context);
	const held = await campaignStatus(runner.context, id);
	expect(held.state).toBe('running');
	expect(held.counts.pending).toBe(waiting.split.remainder);
	expect((await templateSends(runner.sandbox)).length - before).toBe(testCount);
	const shown = await runCli(['campaign', 'status', id], env);
	expect(shown.stdout).toContain("waiting for the operator's choice");

	const chosen = await runCli(['campaign', 'choose', id, '--variant', second, '--json'], env);
	expect(chosen.code).toBe(0);
	expect(JSON.parse(chosen.stdout)).toEqual({ id, variant: 2, template_id: second });
	const final = await waitFor(
		'the remainder sent',
		async () => {
			const status = await campaignStatus(runner.context, id);
			return status.state === 'completed' ? status : undefined;
		},
		60_000,
		250,
	);
	expect(final.counts.sent).toBe(400);
	// The remainder's deliveries are tracked too: every one of the 400 is read, and the funnel settles on them all.
	await waitFor(
		'the funnel to settle on 400 reads',
		async () => {
			const funnel = (await campaignStatus(runner.context, id)).funnel;
			return funnel?.settled && funnel.read === 400 ? funnel : undefined;
		},
		30_000,
		250,
	);
	const byPhone = templatesByPhone((await templateSends(runner.sandbox)).slice(before));
	const seed = (await abOf(id)).seed;
	const wrong: string[] = [];
	for (const phone of phones) {
		const drawn = variantOf({ seed, share: 0.5, variants: 2 }, phone);
		const want = drawn === undefined ? second : [first, second][drawn];
		const got = byPhone.get(phone) ?? [];
		if (got.length !== 1 || got[0] !== want) wrong.push(`${phone}: ${got.join(',')} (want ${want})`);
	}
	expect(wrong).toEqual([]);
	expect((await abOf(id)).chosen_by).toBe('operator');
	// Decided: choosing again is refused, naming the winner and who chose it.
	const again = await runCli(['campaign', 'choose', id, '--variant', '1', '--json'], env);
	expect(again.code).toBe(1);
	expect(JSON.parse(again.stdout).error).toMatch(/is decided already \(variant 2, by operator\)/);

	// One campaign.variant_chosen, with the figures the choice was made on.
	const chosenEvents = await waitFor(
		'the variant_chosen event',
		async () => (events.length > 0 ? events : undefined),
		30_000,
	);
	await new Promise((resolve) => setTimeout(resolve, 2000));
	expect(chosenEvents.map((event) => [event.type, event.data.id])).toEqual([['campaign.variant_chosen', id]]);
	expect(chosenEvents[0].data.ab_test).toMatchObject({
		phase: 'decided',
		winner: 2,
		chosen_by: 'operator',
		decided_on: { verdict: 'tie', pick_by: 'read', critical_z: 1.96, minimum: 20 },
	});
	receiver.closeAllConnections();
	await new Promise((resolve) => receiver.close(resolve));
});

test("a status after the decision walks the test's recipients again: a tie never shows figures older than it", async () => {
	const { redis, keys } = runner.context;
	const [from, id] = ['15550001112', 'c-ab-view'];
	const settings = {
		variants: [
			{ templateId: 't1', variables: [] },
			{ templateId: 't2', variables: [] },
		],
		seed: 'view',
		share: 1,
		pickBy: 'read' as const,
		decideAfterMs: 60_000,
		ifTie: 'wait' as const,
		minimum: 1,
	};
	const campaign = { id, from, total: 4, createdAt: 0 };
	const tracked = (index: number, state: 's' | 'r') =>
		JSON.stringify({ s: state, k: 0, m: `m${index}`, t: 1000, x: 0, o: state === 'r' ? 0 : 1 });
	const indexes = [0, 1, 2, 3];
	await redis.hset(keys.homes, id, from);
	await redis.hset(keys.campaign(from, id), abTestFields(settings, [0, 2, 2]));
	for (const index of indexes) {
		const row = encodeRecipient({ line: index + 2, phone: `4915550000${index}`, variant: (index % 2) + 1 });
		await redis.hset(keys.recipients(from, id), index, row);
		await redis.hset(keys.ledger(from, id), index, `s|1|1000|1000|m${index}|`);
		await redis.hset(keys.tracked(from, id), index, tracked(index, 's'));
	}
	const view = async () => {
		const test = abTestOf(await redis.hgetall(keys.campaign(from, id)));
		const shown = await abTestView(runner.context, campaign, test as NonNullable<typeof test>);
		return [shown.phase, shown.figures.variants.map((variant) => variant.read)];
	};
	expect(await view()).toEqual(['testing', [0, 0]]);
	// Every message read, and the test decided a tie on it, well within the view's 2 s between walks.
	for (const index of indexes) await redis.hset(keys.tracked(from, id), index, tracked(index, 'r'));
	await redis.hset(keys.campaign(from, id), 'ab_phase', 'waiting');
	expect(await view()).toEqual(['waiting', [2, 2]]);
	await redis.del(keys.campaign(from, id), keys.recipients(from, id), keys.ledger(from, id), keys.tracked(from, id));
	await redis.hdel(keys.homes, id);
});

test('the decision is recorded once: a second decider (another process, the operator) finds it taken', async () => {
	const { redis, keys } = runner.context;
	const [hash, outbox] = [keys.campaign('15550001111', 'c-ab-once'), keys.outbox('15550001111')];
	await redis.hset(hash, { id: 'c-ab-once', state: 'running', ab_phase: 'testing', cursor: 70, t_cursor: 70 });
	const decide = redisScript(redis, 'decideVariant');
	expect(await decide([hash, outbox], ['c-ab-once', 1000, '', '{"verdict":"tie"}', 'rule'])).toBe('waiting');
	expect(await decide([hash, outbox], ['c-ab-once', 2000, '2', '{"verdict":"tie"}', 'operator'])).toBe('decided');
	expect(await decide([hash, outbox], ['c-ab-once', 3000, '1', '{}', 'rule'])).toBe('taken');
	expect(await redis.hmget(hash, 'ab_phase', 'ab_winner', 'ab_chosen_by', 'cursor', 't_cursor')).toEqual([
		'decided',
		'2',
		'operator',
		'0',
		'0',
	]);
	const emitted = (await redis.lrange(outbox, 0, -1)).map((entry) => (JSON.parse(entry) as { type: string }).type);
	expect(emitted).toEqual(['campaign.variant_chosen']);
	await redis.del(hash, outbox);
});

test('refused at create, nothing stored: a row without a variable a variant declares (its line and the variable named), test settings without variants, a test without its share or decision time', async () => {
	const [first, second] = variantsOf(runner.business);
	const env = { ...runner.env, ...messagingApi(runner) };
	const path = join(mkdtempSync(join(tmpdir(), 'convo-ab-')), 'recipients.csv');
	writeFileSync(path, 'phone,1,2,first_name\n+491712200001,a,b,Ann\n+491712200002,c,d,\n');
	const base = ['campaign', 'create', '--from', `+${runner.business.phoneNumbers[0]}`, '--recipients', path, '--json'];
	const ab = ['--variant', `${first}:1,2`, '--variant', `${second}:first_name`];
	const before = await runner.context.redis.zcard(runner.context.keys.campaigns);
	const refusals = await Promise.all(
		[
			[...ab, '--test-share', '10%', '--decide-after', '1h'],
			['--template', first, '--test-share', '10%'],
			[...ab, '--decide-after', '1h'],
			[...ab, '--test-share', '10%'],
			[...ab, '--test-share', '95%', '--decide-after', '1h'],
		].map(async (args) => {
			const answer = await runCli([...base, ...args], env);
			return [answer.code, (JSON.parse(answer.stdout) as { error: string }).error];
		}),
	);
	expect(refusals).toEqual([
		[
			1,
			`Nothing was created: line 3 has no value for the variable first_name, which variant 2 (template ${second}) ` +
				'declares: every recipient may get any variant',
		],
		[1, '--test-share is a setting of an A/B test: give two or more --variant'],
		[1, expect.stringMatching(/^--test-share is required with --variant/)],
		[1, expect.stringMatching(/^--decide-after must be a duration from 1s to 720h/)],
		[1, expect.stringMatching(/^--test-share must be a share between 1% and 90%/)],
	]);
	expect(await runner.context.redis.zcard(runner.context.keys.campaigns)).toBe(before);
});
