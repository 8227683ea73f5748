/**
 * The command line as an operator meets it: `--json` prints exactly one JSON document on stdout
 * (logs on stderr) with exit 0, errors exit 1 with `{ "error" }`; a wrong environment names the
 * variable; a wrong option of campaign create is named before Redis is asked; a Redis that may evict is warned about; a scheduled start taken up too late is skipped
 * and says why. Real processes, real Redis, the sandbox.
 */
import { createHmac } from 'node:crypto';

import { campaignStatus, createCampaign } from '../../runner/src/core/campaigns';
import { freePort, startPrivateRedis } from '../../runner/src/devRedis';
import {
	positionalTemplate,
	runCli,
	spawnRunner,
	templateSends,
	useRunnerUnderTest,
	waitFor,
	writeRecipientsCsv,
} from './support';

jest.setTimeout(120_000);

const runner = useRunnerUnderTest({ RUNNER_CONCURRENCY: '10' });

test('create --wait --json, status, list, report: one JSON document each on stdout', async () => {
	runner.spawnWorker();
	const { path, phones } = writeRecipientsCsv(30, { seed: 20, extraLines: ['12,bad,row'] });
	const template = positionalTemplate(runner.business).id;
	const created = await runCli(
		[
			'campaign',
			'create',
			'--template',
			template,
			'--from',
			`+${runner.business.phoneNumbers[0]}`,
			'--recipients',
			path,
			'--rate',
			'100',
			'--wait',
			'--json',
		],
		runner.env,
	);
	expect(created.code).toBe(0);
	const answer = JSON.parse(created.stdout);
	expect(answer).toMatchObject({
		kind: 'campaign',
		accepted: 30,
		rejected: 1,
		rejections: [{ line: 32, phone: '12' }],
		status: { state: 'completed' },
	});
	expect((await templateSends(runner.sandbox)).filter((m) => phones.includes(m.to))).toHaveLength(30);

	const status = await runCli(['campaign', 'status', answer.id, '--json'], runner.env);
	expect(status.code).toBe(0);
	const parsed = JSON.parse(status.stdout);
	expect(Object.keys(parsed).sort()).toEqual([
		'counts',
		'eta_seconds',
		'funnel',
		'id',
		'last_error',
		'name',
		'paused_message',
		'paused_reason',
		'rate',
		'start_at',
		'state',
		'waiting',
	]);
	expect(parsed.name).toBe('recipients');
	// Started at its create: no start time of its own.
	expect(parsed.start_at).toBeNull();
	expect(parsed.counts).toEqual({
		pending: 0,
		claimed: 0,
		sent: 30,
		failed: 0,
		rejected: 1,
		cancelled: 0,
		unknown: 0,
		not_sent: 0,
		expired: 0,
		suppressed: 0,
		capped: 0,
	});

	const list = await runCli(['campaign', 'list', '--json'], runner.env);
	expect(JSON.parse(list.stdout).campaigns.map((c: { id: string }) => c.id)).toContain(answer.id);

	const csv = await runCli(['campaign', 'report', answer.id, '--format', 'csv'], runner.env);
	const lines = csv.stdout.trim().split('\n');
	expect(lines[0]).toBe(
		'line,phone,outcome,message_id,error,attempts,first_attempt_at,last_attempt_at,delivery,delivered_at,read_at,replied_at,delivery_error',
	);
	expect(lines).toHaveLength(32);
	expect(lines[1]).toMatch(new RegExp(`^2,${phones[0]},sent,[0-9a-f-]{36},,1,`));
	// The report's phone cell keeps the phone as given; the reason does not quote it.
	expect(lines[31]).toMatch(/^32,12,rejected,,line 32: phone has 2 digits/);

	// "Nothing to do" is a success: resuming a completed campaign is refused, retrying with nothing not sent is fine.
	const retry = await runCli(['campaign', 'retry', answer.id, '--not-sent', '--json'], runner.env);
	expect(retry.code).toBe(0);
	expect(JSON.parse(retry.stdout)).toMatchObject({ requeued: 0, state: 'completed' });
});

test('errors: exit 1, a JSON error on stdout with --json, the reason on stderr', async () => {
	const missing = await runCli(['campaign', 'status', 'cnosuchcampaign', '--json'], runner.env);
	expect(missing.code).toBe(1);
	expect(JSON.parse(missing.stdout)).toEqual({ error: 'No campaign with id cnosuchcampaign' });
	expect(missing.stderr).toContain('No campaign with id cnosuchcampaign');

	const bad = await runCli(
		[
			'campaign',
			'create',
			'--template',
			'not-a-uuid',
			'--from',
			'12',
			'--recipients',
			'/nonexistent.csv',
			'--rate',
			'1.5',
			'--json',
		],
		runner.env,
	);
	expect(bad.code).toBe(1);
	const { error } = JSON.parse(bad.stdout);
	expect(error).toContain('--template must be a UUID');
	expect(error).toContain('--from');
	// The rate's rule and words are the contract's (runnerRate), the same for campaigns, reindex and the API.
	expect(error).toContain('--rate must be a whole number of sends per second');
	const badRate = await runCli(['campaign', 'rate', 'cnosuchcampaign', '5000', '--json'], runner.env);
	expect(badRate.code).toBe(1);
	expect(JSON.parse(badRate.stdout)).toEqual({ error: 'rate may be at most 1000 sends per second' });
});

test('campaign create names a wrong option before it connects: a Redis that does not answer is not what it reports', async () => {
	const down = { ...runner.env, REDIS_URL: `redis://127.0.0.1:${await freePort()}` };
	const create = (rate: string) =>
		runCli(
			[
				'campaign',
				'create',
				'--template',
				positionalTemplate(runner.business).id,
				'--from',
				`+${runner.business.phoneNumbers[0]}`,
				'--recipients',
				'/nonexistent.csv',
				'--rate',
				rate,
				'--json',
			],
			down,
		);
	const bad = await create('1.5');
	expect(bad.code).toBe(1);
	expect(JSON.parse(bad.stdout).error).toMatch(/^--rate must be a whole number of sends per second/);
	// The same create with a right rate gets as far as Redis, which does not answer.
	const right = await create('5');
	expect(right.code).toBe(1);
	expect(JSON.parse(right.stdout).error).toMatch(/^Redis at 127\.0\.0\.1:\d+ does not answer/);
});

test('a wrong environment stops the process naming each variable; no secret in the message', async () => {
	const result = await runCli(
		['worker'],
		{ ...runner.env, RUNNER_CONCURRENCY: 'many', CONVO_EXTERNAL_URL: 'ftp://x', REDIS_URL: 'http://nope' },
		30_000,
	);
	expect(result.code).toBe(1);
	expect(result.stderr).toMatch(/RUNNER_CONCURRENCY/);
	expect(result.stderr).toMatch(/CONVO_EXTERNAL_URL/);
	expect(result.stderr).toMatch(/REDIS_URL/);
	expect(result.stderr).not.toContain(runner.business.apiKey);
});

test('a Redis that may evict keys gets a warning at start', async () => {
	const evicting = await startPrivateRedis(['--maxmemory-policy', 'allkeys-lru']);
	const worker = spawnRunner(['worker'], { ...runner.env, REDIS_URL: evicting.url });
	try {
		await waitFor(
			'the eviction warning',
			async () => /maxmemory-policy is not noeviction/.test(worker.output()),
			30_000,
		);
		expect(worker.output()).toContain('"maxmemoryPolicy":"allkeys-lru"');
	} finally {
		await worker.kill('SIGKILL');
		await evicting.stop();
	}
});

test('a start taken up later than RUNNER_MAX_LATENESS is skipped, reported, and sends nothing', async () => {
	const { path, phones } = writeRecipientsCsv(5, { seed: 21 });
	const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000).toISOString();
	const created = await createCampaign(runner.context, {
		templateId: positionalTemplate(runner.business).id,
		from: runner.business.phoneNumbers[0],
		source: path,
		at: twoHoursAgo,
	});
	if (created.kind !== 'campaign') throw new Error('expected a campaign');
	const status = await waitFor(
		'the late start to be skipped',
		async () => {
			const current = await campaignStatus(runner.context, created.id);
			// The state changes first, then the pending rows move (control.ts endWithPending): wait for both.
			return current.state === 'cancelled' && current.counts.pending === 0 ? current : undefined;
		},
		30_000,
	);
	expect(status.last_error).toMatch(/^skipped: it fell due at .* \(limit 3600 s\)$/);
	expect(status.counts.cancelled).toBe(5);
	expect((await templateSends(runner.sandbox)).filter((m) => phones.includes(m.to))).toEqual([]);
});

test('webhook add, list, remove: the secret is printed by add only, derived from RUNNER_WEBHOOK_KEY; without a key add says which variable to set', async () => {
	const env = { ...runner.env, RUNNER_WEBHOOK_KEY: 'webhook-key-0123456789abcdef' };
	const added = await runCli(
		[
			'webhook',
			'add',
			'https://example.com/hook',
			'--events',
			'campaign.finished,reindex.finished',
			'--description',
			'ops',
			'--json',
		],
		env,
	);
	expect(added.code).toBe(0);
	const webhook = JSON.parse(added.stdout);
	expect(webhook).toMatchObject({
		url: 'https://example.com/hook',
		events: ['campaign.finished', 'reindex.finished'],
		description: 'ops',
	});
	expect(webhook.secret).toBe(
		createHmac('sha256', env.RUNNER_WEBHOOK_KEY).update(`webhook:${webhook.id}`).digest('hex'),
	);
	const list = await runCli(['webhook', 'list', '--json'], env);
	expect(JSON.parse(list.stdout).webhooks).toEqual([
		{
			id: webhook.id,
			url: webhook.url,
			events: webhook.events,
			description: 'ops',
			created_at: webhook.created_at,
			failures: 0,
		},
	]);
	expect(list.stdout + list.stderr + added.stderr).not.toContain(webhook.secret);
	// A test event is queued for it (no process delivers here), once; its deliveries list is empty until one is tried.
	const tested = JSON.parse((await runCli(['webhook', 'test', webhook.id, '--json'], env)).stdout);
	expect(tested).toEqual({ id: webhook.id, delivery_id: expect.stringMatching(/^ev-test-/), queued: true });
	expect((await runCli(['webhook', 'test', webhook.id], env)).stdout).toBe(
		`${webhook.id}: a test event is queued already (delivery ${tested.delivery_id})\n`,
	);
	expect((await runCli(['webhook', 'deliveries', webhook.id], env)).stdout).toBe('no deliveries yet\n');
	expect(JSON.parse((await runCli(['webhook', 'remove', webhook.id, '--json'], env)).stdout)).toEqual({
		id: webhook.id,
		removed: true,
	});
	const again = await runCli(['webhook', 'remove', webhook.id, '--json'], env);
	expect(again.code).toBe(1);
	expect(JSON.parse(again.stdout)).toEqual({ error: `No webhook with id ${webhook.id}` });
	const bad = await runCli(
		['webhook', 'add', 'https://example.com/hook', '--events', 'campaign.started', '--json'],
		env,
	);
	expect(JSON.parse(bad.stdout).error).toMatch(
		/^events must be one of campaign.finished, campaign.paused, campaign.waiting, campaign.delivery_settled, campaign.variant_chosen, reindex.finished/,
	);
	const keyless = await runCli(
		['webhook', 'add', 'https://example.com/hook', '--events', 'campaign.finished', '--json'],
		runner.env,
	);
	expect(keyless.code).toBe(1);
	expect(JSON.parse(keyless.stdout).error).toMatch(/^RUNNER_WEBHOOK_KEY \(or RUNNER_TOKEN\) must be set/);
});

test('campaign list shows every campaign, not only the newest 100', async () => {
	const { path } = writeRecipientsCsv(1, { seed: 27 });
	// Scheduled an hour ahead: stored and listed, nothing sent.
	const at = new Date(Date.now() + 3_600_000).toISOString();
	const template = positionalTemplate(runner.business).id;
	for (let i = 0; i < 105; i += 1)
		await createCampaign(runner.context, {
			templateId: template,
			from: runner.business.phoneNumbers[0],
			source: path,
			at,
		});
	const total = await runner.context.redis.zcard(runner.context.keys.campaigns);
	expect(total).toBeGreaterThanOrEqual(105);
	const list = await runCli(['campaign', 'list', '--json'], runner.env);
	expect(list.code).toBe(0);
	const ids: string[] = JSON.parse(list.stdout).campaigns.map((c: { id: string }) => c.id);
	expect(ids).toHaveLength(total);
	expect(new Set(ids).size).toBe(total);
});
