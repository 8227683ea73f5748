/**
 * A throwaway redis-server child on a free port, for development and tests only: `start --dev-redis`
 * (through runtime.ts), `npm start`, the tests and the benchmarks. Production connects with redis.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A TCP port free on loopback right now (another process may take it before it is used). */
export async function freePort(): Promise<number> {
	return new Promise((resolve, reject) => {
		const server = createServer();
		server.once('error', reject);
		server.listen(0, '127.0.0.1', () => {
			const { port } = server.address() as { port: number };
			server.close(() => resolve(port));
		});
	});
}

export interface PrivateRedis {
	url: string;
	process: ChildProcess;
	stop(): Promise<void>;
}

/**
 * Starts redis-server on loopback in a temporary folder; `extraArgs` e.g. AOF settings. A given
 * `port` and `dir` start it again where it was (a restart that finds its AOF).
 */
export async function startPrivateRedis(extraArgs: string[] = [], dir?: string, port?: number): Promise<PrivateRedis> {
	port ??= await freePort();
	const workDir = dir ?? mkdtempSync(join(tmpdir(), 'convo-redis-'));
	const child = spawn(
		'redis-server',
		[
			'--port',
			String(port),
			'--bind',
			'127.0.0.1',
			'--save',
			'',
			'--dir',
			workDir,
			'--maxmemory-policy',
			'noeviction',
			...extraArgs,
		],
		{
			stdio: ['ignore', 'pipe', 'pipe'],
		},
	);
	let output = '';
	child.stdout?.on('data', (chunk) => (output += String(chunk)));
	child.stderr?.on('data', (chunk) => (output += String(chunk)));
	await new Promise<void>((resolve, reject) => {
		child.once('error', (error: NodeJS.ErrnoException) =>
			reject(
				error.code === 'ENOENT'
					? new Error(
							'no redis-server is on PATH to start a throwaway Redis: ' +
								'install Redis (e.g. apt-get install redis-server) or set REDIS_URL to a Redis of your own',
						)
					: error,
			),
		);
		child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${output.slice(-500)}`)));
		const started = Date.now();
		const poll = setInterval(() => {
			if (/Ready to accept connections/.test(output)) {
				clearInterval(poll);
				resolve();
			} else if (Date.now() - started > 10_000) {
				clearInterval(poll);
				reject(new Error(`redis-server did not start within 10 s: ${output.slice(-500)}`));
			}
		}, 20);
	});
	child.removeAllListeners('exit');
	const stop = async () => {
		if (child.exitCode === null && child.signalCode === null) {
			const exited = new Promise((resolve) => child.once('exit', resolve));
			child.kill('SIGTERM');
			await exited;
		}
		if (!dir) rmSync(workDir, { recursive: true, force: true });
	};
	return { url: `redis://127.0.0.1:${port}`, process: child, stop };
}
