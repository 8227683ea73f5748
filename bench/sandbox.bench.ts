/**
 * Throughput of the sandbox for send and status calls on loopback, no faults set.
 * The sandbox runs in its own process (as `npm run sandbox` does), so client and server each
 * get a core of this 2-core machine. Bounded by count and time. Not a test: prints the figure.
 *
 *   npm run bench:sandbox [-- --seconds 5 --workers 32 --max 50000]
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

import type { Fixture } from '../sandbox/src';

const TARGET_RPS = 1000;

function option(name: string, fallback: number): number {
	const index = process.argv.indexOf(`--${name}`);
	const value = index === -1 ? undefined : Number(process.argv[index + 1]);
	return value !== undefined && Number.isFinite(value) && value > 0 ? value : fallback;
}

async function startSandboxProcess(): Promise<{ baseUrl: string; stop: () => void }> {
	const bin = resolve(__dirname, '../sandbox/bin/convo-sandbox.mjs');
	const child = spawn(process.execPath, [bin, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
	const baseUrl = await new Promise<string>((done, fail) => {
		let output = '';
		child.stdout.on('data', (chunk: Buffer) => {
			output += chunk.toString();
			const match = /base_url\s+(http:\/\/\S+)/.exec(output);
			if (match) done(match[1]);
		});
		child.once('exit', (code) => fail(new Error(`sandbox exited with ${code}`)));
		setTimeout(() => fail(new Error('sandbox did not start in 20 s')), 20_000).unref();
	});
	return { baseUrl, stop: () => child.kill('SIGTERM') };
}

async function main(): Promise<void> {
	const seconds = option('seconds', 5);
	const workers = option('workers', 32);
	const max = option('max', 50_000);
	const sandbox = await startSandboxProcess();
	try {
		const fixture = (await (await fetch(`${sandbox.baseUrl}/__sandbox/fixture`)).json()) as Fixture;
		const business = fixture.businesses[0];
		const contact = business.contacts.find((c) => c.inWindow && !c.undeliverable)!;
		const headers = { authorization: `Bearer ${business.accessToken}`, 'content-type': 'application/json' };
		const sendBody = JSON.stringify({ to: contact.phoneNumber, from: 'whatsapp', type: 'text', content: { text: 'bench' }, channel_uuid: business.channelUuid });

		const sent: string[] = [];
		let issued = 0;
		let ok = 0;
		let failed = 0;
		const counts = { send: 0, status: 0 };
		const deadline = Date.now() + seconds * 1000;

		const one = async (): Promise<void> => {
			// Alternate: a send, then a status lookup of a message sent earlier.
			const isSend = sent.length === 0 || issued % 2 === 0;
			issued++;
			const response = isSend
				? await fetch(`${sandbox.baseUrl}/v1/messages/send`, { method: 'POST', headers, body: sendBody })
				: await fetch(`${sandbox.baseUrl}/v1/messages/status/${sent[issued % sent.length]}`, { headers });
			const body = (await response.json()) as { message?: { uuid: string } };
			if (response.status === 200) {
				ok++;
				counts[isSend ? 'send' : 'status']++;
				if (isSend && body.message && sent.length < 10_000) sent.push(body.message.uuid);
			} else {
				failed++;
			}
		};

		// Warm-up: JIT and connections.
		await Promise.all(Array.from({ length: workers }, () => one()));
		issued = ok = failed = counts.send = counts.status = 0;

		const started = performance.now();
		await Promise.all(
			Array.from({ length: workers }, async () => {
				while (Date.now() < deadline && issued < max) await one();
			}),
		);
		const elapsed = (performance.now() - started) / 1000;
		const rps = ok / elapsed;
		console.log(
			`sandbox bench: ${ok} ok (${counts.send} send, ${counts.status} status), ${failed} failed, ${workers} workers, ${elapsed.toFixed(2)} s`,
		);
		console.log(`requests/s: ${Math.round(rps)} (target >= ${TARGET_RPS}: ${rps >= TARGET_RPS ? 'met' : 'NOT met'})`);
		if (failed > 0) process.exitCode = 1;
	} finally {
		sandbox.stop();
	}
}

main().catch((error: unknown) => {
	console.error(error);
	process.exit(1);
});
