import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { resolve } from 'node:path';

const BIN = resolve(__dirname, '../../sandbox/bin/convo-sandbox.mjs');

/** A port the system just handed out and released, so it is free and not the default. */
async function freePort(): Promise<number> {
	const server = createServer();
	await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
	const { port } = server.address() as AddressInfo;
	await new Promise((done) => server.close(done));
	return port;
}

interface CliFixture {
	baseUrl: string;
	externalUrl: string;
	businesses: Array<{ apiKey: string; phoneNumbers: string[]; templates: Array<{ id: string; kind: string }> }>;
}

/** Starts the CLI, waits for its banner, reads the fixture over HTTP, runs `meanwhile`, stops it. */
async function runCli(
	args: string[],
	env: Record<string, string>,
	meanwhile: (fixture: CliFixture) => Promise<void> = async () => undefined,
): Promise<{ banner: string; fixture: CliFixture }> {
	const child = spawn(process.execPath, [BIN, ...args], {
		env: { ...process.env, ...env },
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	try {
		const banner = await new Promise<string>((done, fail) => {
			let output = '';
			child.stdout.on('data', (chunk: Buffer) => {
				output += chunk.toString();
				if (output.includes('openapi')) done(output);
			});
			child.once('exit', (code) => fail(new Error(`exited with ${code}: ${output}`)));
		});
		const baseUrl = /base_url\s+(\S+)/.exec(banner)![1];
		const fixture = (await (await fetch(`${baseUrl}/__sandbox/fixture`)).json()) as CliFixture;
		await meanwhile(fixture);
		return { banner, fixture };
	} finally {
		child.kill('SIGTERM');
	}
}

describe('sandbox: the convo-sandbox command', () => {
	it('starts on --port (before SANDBOX_PORT) and prints both base addresses and where the fixture is', async () => {
		const { banner, fixture } = await runCli(['--port', '0'], { SANDBOX_PORT: 'not-a-port' });
		expect(banner).toMatch(/base_url\s+http:\/\/127\.0\.0\.1:\d+/);
		expect(banner).toContain(`${fixture.baseUrl}/api/external/v2`);
		expect(banner).toContain(`${fixture.baseUrl}/__sandbox/fixture`);
	});

	it('takes the port from SANDBOX_PORT and refuses a bad --port', async () => {
		// A port known to be free, not 0: with 0 any port would pass, SANDBOX_PORT read or not.
		const port = await freePort();
		const { fixture } = await runCli([], { SANDBOX_PORT: String(port) });
		expect(fixture.baseUrl).toBe(`http://127.0.0.1:${port}`);
		const bad = spawn(process.execPath, [BIN, '--port', 'abc'], { stdio: 'ignore' });
		expect(await new Promise((done) => bad.once('exit', done))).toBe(2);
	});

	it('a port already taken stops it with one line naming the port and SANDBOX_PORT, no stack trace', async () => {
		const taken = createServer();
		await new Promise<void>((done) => taken.listen(0, '127.0.0.1', done));
		const { port } = taken.address() as { port: number };
		try {
			const child = spawn(process.execPath, [BIN], {
				env: { ...process.env, SANDBOX_PORT: String(port) },
				stdio: ['ignore', 'pipe', 'pipe'],
			});
			let stderr = '';
			child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
			expect(await new Promise((done) => child.once('exit', done))).toBe(1);
			expect(stderr.trim()).toBe(
				`convo-sandbox could not start: port ${port} on 127.0.0.1 is already in use (another sandbox?): stop that process, or pick another port with --port N or SANDBOX_PORT=N (0 takes any free port)`,
			);
		} finally {
			taken.close();
		}
	});

	it('takes the default delivery timeline from --timeline (before SANDBOX_TIMELINE): sends follow it', async () => {
		const { banner } = await runCli(
			['--port', '0', '--timeline', 'sent=100,delivered=200,read=300,failed=150'],
			{ SANDBOX_TIMELINE: 'not a timeline' },
			async (fixture) => {
				const [business] = fixture.businesses;
				const template = business.templates.find((candidate) => candidate.kind === 'positional')!;
				const sent = await fetch(
					`${fixture.externalUrl}/send-template?template_id=${template.id}&from_phone_number=${business.phoneNumbers[0]}`,
					{
						method: 'POST',
						headers: { 'x-api-key': business.apiKey, 'content-type': 'application/json' },
						body: JSON.stringify({ phone: '4917000000001', 1: 'Ada', 2: 'A-1' }),
					},
				);
				expect(sent.status).toBe(200);
				const [message] = (await (await fetch(`${fixture.baseUrl}/__sandbox/messages`)).json()) as Array<{
					createdAt: string;
				}>;
				const [outcome] = (await (await fetch(`${fixture.baseUrl}/__sandbox/delivery/outcomes`)).json()) as Array<
					Record<string, string>
				>;
				const after = (time: string) => Date.parse(time) - Date.parse(message.createdAt);
				expect([after(outcome.sent_at), after(outcome.delivered_at), after(outcome.read_at)]).toEqual([100, 200, 300]);
			},
		);
		expect(banner).toContain('timeline      sent 100 ms, delivered 200 ms, read 300 ms, failed 150 ms after the send');
	});

	it('takes the timeline from SANDBOX_TIMELINE (steps left out keep the default) and refuses a bad --timeline', async () => {
		const { banner } = await runCli(['--port', '0'], { SANDBOX_TIMELINE: 'read=20000' });
		expect(banner).toContain(
			'timeline      sent 2000 ms, delivered 4000 ms, read 20000 ms, failed 2000 ms after the send',
		);
		const bad = spawn(process.execPath, [BIN, '--port', '0', '--timeline', 'sent=300,delivered=200'], {
			stdio: ['ignore', 'ignore', 'pipe'],
		});
		let stderr = '';
		bad.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
		expect(await new Promise((done) => bad.once('exit', done))).toBe(2);
		expect(stderr.trim()).toBe(
			'--timeline: delivered (200) must be at least sent (300): a step cannot come before the one it follows',
		);
	});
});
