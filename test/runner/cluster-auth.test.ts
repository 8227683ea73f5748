/**
 * A Redis Cluster that asks for a password and speaks only TLS, as managed Clusters do: the real bin
 * reaches all three masters with REDIS_CLUSTER_PASSWORD (from its `_FILE`) and REDIS_CLUSTER_TLS, the
 * nodes' certificate signed by a CA of the test's own (NODE_EXTRA_CA_CERTS). Sends counted in the
 * sandbox's log; the password looked for in every log line and every key on every master.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Cluster } from 'ioredis';

import { ConfigError, loadConfig } from '../../runner/src/config';
import {
	dumpKeys,
	runCli,
	sendThroughApi,
	spawnRunner,
	startRedisCluster,
	startSandboxProcess,
	uniquePrefix,
	waitFor,
	writeTestCertificates,
	type ClusterUnderTest,
	type SpawnedRunner,
	apiUrlOf,
} from './support';

jest.setTimeout(120_000);

const PASSWORD = 'cluster-pass-4e9b-c21f';
const TOKEN = 'cluster-token-0123456789abcdef';
const PREFIX = uniquePrefix();

let dir: string;
let certificates: ReturnType<typeof writeTestCertificates>;
let cluster: ClusterUnderTest | undefined;
let sandbox: Awaited<ReturnType<typeof startSandboxProcess>>;
let runner: SpawnedRunner | undefined;

beforeAll(async () => {
	dir = mkdtempSync(join(tmpdir(), 'convo-cluster-auth-'));
	certificates = writeTestCertificates(dir);
	cluster = await startRedisCluster(3, { password: PASSWORD, tls: certificates });
	sandbox = await startSandboxProcess();
});
afterAll(async () => {
	await runner?.kill('SIGKILL');
	await cluster?.stop();
	await sandbox?.close();
	rmSync(dir, { recursive: true, force: true });
});

const business = () => sandbox.fixture.businesses[0];

/** A process's environment for this Cluster: `cluster` the settings that reach it, nothing from the parent's. */
function envWith(cluster: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
	return {
		PATH: process.env.PATH,
		HOME: process.env.HOME,
		LOG_LEVEL: 'info',
		RUNNER_PREFIX: PREFIX,
		CONVO_EXTERNAL_URL: sandbox.externalUrl,
		CONVO_API_KEY: business().apiKey,
		NODE_EXTRA_CA_CERTS: certificates.ca,
		...cluster,
	};
}

const reachingSettings = (): NodeJS.ProcessEnv => ({
	REDIS_CLUSTER_NODES: cluster?.nodes,
	REDIS_CLUSTER_PASSWORD: PASSWORD,
	REDIS_CLUSTER_TLS: 'true',
});

test('start sends through a Cluster with a password and TLS (REDIS_CLUSTER_PASSWORD_FILE, REDIS_CLUSTER_TLS): 3 of 3 at the sandbox, the password in no log line and no key', async () => {
	const passwordFile = join(dir, 'redis-password');
	writeFileSync(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
	const { REDIS_CLUSTER_PASSWORD: _given, ...settings } = reachingSettings();
	runner = spawnRunner(
		['start'],
		envWith({
			...settings,
			REDIS_CLUSTER_PASSWORD_FILE: passwordFile,
			RUNNER_TOKEN: TOKEN,
			RUNNER_HTTP_PORT: '0',
		}),
	);
	const base = await apiUrlOf(runner);
	const phones = ['+4917088100011', '+4917088100012', '+4917088100013'];
	const id = await sendThroughApi(runner, base, TOKEN, sandbox, phones);
	await waitFor(
		'the campaign to complete',
		async () => {
			const status = await fetch(`${base}/api/campaigns/${id}`, { headers: { authorization: `Bearer ${TOKEN}` } });
			return ((await status.json()) as { state?: string }).state === 'completed';
		},
		30_000,
	);

	expect(runner.output()).not.toContain(PASSWORD);
	// The test's own look at every master, over TLS with the password given directly.
	const look = new Cluster(
		(cluster?.nodes ?? '').split(',').map((node) => ({ host: '127.0.0.1', port: Number(node.split(':')[1]) })),
		{
			redisOptions: { password: PASSWORD, tls: { ca: readFileSync(certificates.ca) } },
			dnsLookup: (address, lookedUp) => lookedUp(null, address),
		},
	);
	try {
		await look.ping();
		const keys = await dumpKeys(look, PREFIX);
		expect(keys).toContain(id);
		expect(keys).not.toContain(PASSWORD);
	} finally {
		look.disconnect();
	}
});

test('the CLI reaches the Cluster with the same settings; without the password, with a wrong one or without TLS it fails saying why, never printing a password', async () => {
	const listed = await runCli(['campaign', 'list', '--json'], envWith(reachingSettings()), 30_000);
	expect({ code: listed.code, total: (JSON.parse(listed.stdout) as { total: number }).total }).toEqual({
		code: 0,
		total: 1,
	});

	const wrong = 'wrong-pass-77d0-a1b2';
	const attempts = {
		'no password': { ...reachingSettings(), REDIS_CLUSTER_PASSWORD: undefined },
		'a wrong password': { ...reachingSettings(), REDIS_CLUSTER_PASSWORD: wrong },
		'no TLS': { ...reachingSettings(), REDIS_CLUSTER_TLS: undefined },
	};
	const answers: Record<string, { code: number | null; error: string }> = {};
	for (const [name, settings] of Object.entries(attempts)) {
		const result = await runCli(['campaign', 'list', '--json'], envWith(settings), 30_000);
		expect(result.stdout + result.stderr).not.toContain(PASSWORD);
		expect(result.stdout + result.stderr).not.toContain(wrong);
		answers[name] = { code: result.code, error: (JSON.parse(result.stdout) as { error: string }).error };
	}
	const refused = (word: string) =>
		expect.stringMatching(
			new RegExp(`^the Redis Cluster at \\S+ does not answer within 3 s \\(.*${word}.*REDIS_CLUSTER_PASSWORD`),
		);
	expect(answers).toEqual({
		'no password': { code: 1, error: refused('NOAUTH') },
		'a wrong password': { code: 1, error: refused('WRONGPASS') },
		'no TLS': { code: 1, error: expect.stringMatching(/^the Redis Cluster at \S+ does not answer within 3 s/) },
	});
});

test("the Cluster's settings without REDIS_CLUSTER_NODES: refused, each named, pointing at REDIS_URL", () => {
	const refusal = (() => {
		try {
			loadConfig({
				REDIS_URL: 'redis://127.0.0.1:6379',
				REDIS_CLUSTER_USERNAME: 'runner',
				REDIS_CLUSTER_PASSWORD: PASSWORD,
				REDIS_CLUSTER_TLS: 'true',
			});
		} catch (error) {
			return error;
		}
		return undefined;
	})();
	expect(refusal).toBeInstanceOf(ConfigError);
	const message = (refusal as Error).message;
	for (const name of ['REDIS_CLUSTER_USERNAME', 'REDIS_CLUSTER_PASSWORD', 'REDIS_CLUSTER_TLS'])
		expect(message).toContain(`${name} is for REDIS_CLUSTER_NODES, which is not set: REDIS_URL carries its own`);
	expect(message).not.toContain(PASSWORD);
});
