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

/** Starts the CLI, waits for its banner, reads the fixture over HTTP, stops it. */
async function runCli(
	args: string[],
	env: Record<string, string>,
): Promise<{ banner: string; fixture: { baseUrl: string } }> {
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
		const fixture = (await (await fetch(`${baseUrl}/__sandbox/fixture`)).json()) as { baseUrl: string };
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
});
