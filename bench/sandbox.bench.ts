/**
 * Benchmark 5: the sandbox's capacity, so it is never what bounds benchmarks 1 to 4. The sandbox
 * runs in a process of its own (as `npm run sandbox` does) with no faults; this process drives it
 * with 32 requests in flight for a few seconds per call:
 *
 *   send     B8 POST /send-template to a new phone each time (what the runner and the workflow send)
 *   status   A1 GET /v1/messages/status/:uuid of messages sent before
 *   upsert   B1 POST /search/item, a new external_id each time (what reindex sends)
 *
 * Client and server share this 2-core machine, so the calls answered per second are a lower bound.
 * The capacity judged is the sandbox's per core: calls answered per CPU second the sandbox process
 * used (every thread, /proc/<pid>/stat), which does not depend on what else ran. Headroom is that
 * capacity over the highest rate of the call benchmarks 1 to 4 reached in this run (or the last
 * results written, when run alone).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

import { freePort } from '../runner/src/devRedis';
import type { RunningSandbox } from '../sandbox/src';
import { positionalTemplate, waitFor } from '../test/runner/support';
import type { CampaignScenarioResult } from './campaigns.bench';
import { cpuSeconds, readResult, ROOT, round, size, type BenchResult, type Figure } from './lib/common';

const WORKERS = 32;

type Call = () => Promise<boolean>;

/** The sandbox as `npm run sandbox` runs it, with its pid for the CPU it uses. */
async function startSandbox(): Promise<RunningSandbox & { pid: number }> {
	const port = await freePort();
	const child = spawn(process.execPath, [join(ROOT, 'sandbox', 'bin', 'convo-sandbox.mjs'), '--port', String(port)], {
		stdio: ['ignore', 'ignore', 'inherit'],
	});
	const baseUrl = `http://127.0.0.1:${port}`;
	const fixture = await waitFor(
		'the sandbox to start',
		async () => {
			if (child.exitCode !== null) throw new Error(`the sandbox exited with ${child.exitCode}`);
			const response = await fetch(`${baseUrl}/__sandbox/fixture`).catch(() => undefined);
			return response?.ok ? ((await response.json()) as RunningSandbox['fixture']) : undefined;
		},
		30_000,
		100,
	);
	return {
		baseUrl,
		externalUrl: fixture.externalUrl,
		fixture,
		pid: child.pid as number,
		close: async () => {
			const exited = new Promise((resolve) => child.once('exit', resolve));
			child.kill('SIGTERM');
			await exited;
		},
	};
}

interface Capacity {
	/** Calls answered per second of wall time, client and sandbox sharing the machine. */
	perSecond: number;
	/** Calls answered per CPU second of the sandbox process: what one core of its own serves. */
	perCore: number;
	ok: number;
	failed: number;
}

/** Keeps WORKERS calls in flight for `seconds` after a warm-up. */
async function capacity(call: Call, seconds: number, pid: number): Promise<Capacity> {
	await Promise.all(Array.from({ length: WORKERS }, () => call()));
	let ok = 0;
	let failed = 0;
	const cpuBefore = cpuSeconds(pid);
	const started = performance.now();
	const deadline = started + seconds * 1000;
	await Promise.all(
		Array.from({ length: WORKERS }, async () => {
			while (performance.now() < deadline) {
				if (await call()) ok++;
				else failed++;
			}
		}),
	);
	const wall = (performance.now() - started) / 1000;
	return { perSecond: ok / wall, perCore: ok / Math.max(0.01, cpuSeconds(pid) - cpuBefore), ok, failed };
}

function calls(sandbox: RunningSandbox): Record<'send' | 'status' | 'upsert', Call> & { prepare(): Promise<void> } {
	const business = sandbox.fixture.businesses[0];
	const external = { 'x-api-key': business.apiKey, 'content-type': 'application/json' };
	const bearer = { authorization: `Bearer ${business.accessToken}`, 'content-type': 'application/json' };
	const template = positionalTemplate(business).id;
	const sendUrl = `${sandbox.externalUrl}/send-template?template_id=${template}&from_phone_number=${business.phoneNumbers[0]}`;
	const contact = business.contacts.find((c) => c.inWindow && !c.undeliverable);
	if (!contact) throw new Error('the fixture has no contact in its window');
	const collection = business.collections[0].id;
	const sent: string[] = [];
	let counter = 0;
	return {
		prepare: async () => {
			for (let i = 0; i < 200; i++) {
				const body = JSON.stringify({
					to: contact.phoneNumber,
					from: 'whatsapp',
					type: 'text',
					content: { text: `status ${i}` },
					channel_uuid: business.channelUuid,
				});
				const answer = (await (
					await fetch(`${sandbox.baseUrl}/v1/messages/send`, { method: 'POST', headers: bearer, body })
				).json()) as { message: { uuid: string } };
				sent.push(answer.message.uuid);
			}
		},
		send: async () => {
			const phone = `4917199${String(counter++).padStart(6, '0')}`;
			const response = await fetch(sendUrl, {
				method: 'POST',
				headers: external,
				body: JSON.stringify({ phone, 1: 'Customer', 2: 'order' }),
			});
			await response.arrayBuffer();
			return response.status === 200;
		},
		status: async () => {
			const response = await fetch(`${sandbox.baseUrl}/v1/messages/status/${sent[counter++ % sent.length]}`, {
				headers: bearer,
			});
			await response.arrayBuffer();
			return response.status === 200;
		},
		upsert: async () => {
			const i = counter++;
			const body = JSON.stringify({
				collection_id: collection,
				external_id: `bench-${i}`,
				item: { sku: `bench-${i}`, title: `Product ${i}`, price: i / 100 },
				active: true,
			});
			const response = await fetch(`${sandbox.externalUrl}/search/item`, { method: 'POST', headers: external, body });
			await response.arrayBuffer();
			return response.status === 200 || response.status === 201;
		},
	};
}

/** The highest rate of each call that benchmarks 1 to 4 reached, with where. */
function needs(earlier: Map<string, BenchResult>): { send: Array<[string, number]>; upsert: Array<[string, number]> } {
	const result = (name: string) => earlier.get(name) ?? readResult(name);
	const send: Array<[string, number]> = [];
	const upsert: Array<[string, number]> = [];
	for (const run of (result('campaigns')?.details?.runs as CampaignScenarioResult[] | undefined) ?? [])
		send.push([`benchmark 1 ${run.name}`, run.steadyRate]);
	for (const run of (result('workflow')?.details?.runs as Array<{ mode: string; steadyRate: number }> | undefined) ??
		[])
		send.push([`benchmark 2 ${run.mode}`, run.steadyRate]);
	const memory = result('memory')?.details as { rates?: { steadyRate: number } } | undefined;
	if (memory?.rates) send.push(['benchmark 3 (limit off, no latency)', memory.rates.steadyRate]);
	const reindex = result('reindex')?.details as
		| { hundredThousand?: { first: { upserts: number; seconds: number } } }
		| undefined;
	if (reindex?.hundredThousand)
		upsert.push([
			'benchmark 4 first run',
			reindex.hundredThousand.first.upserts / reindex.hundredThousand.first.seconds,
		]);
	return { send, upsert };
}

export async function benchSandbox(
	_redisUrl: string,
	earlier: Map<string, BenchResult> = new Map(),
): Promise<BenchResult> {
	const started = Date.now();
	const seconds = size(6, 2);
	const sandbox = await startSandbox();
	const measured: Record<string, Capacity> = {};
	try {
		const call = calls(sandbox);
		await call.prepare();
		for (const name of ['send', 'status', 'upsert'] as const)
			measured[name] = await capacity(call[name], seconds, sandbox.pid);
	} finally {
		await sandbox.close();
	}
	const need = needs(earlier);
	const figures: Figure[] = [];
	for (const [name, label] of [
		['send', 'B8 send'],
		['status', 'A1 status'],
		['upsert', 'B1 upsert'],
	] as const) {
		const { perSecond, perCore, ok, failed } = measured[name];
		figures.push(
			{
				figure: `${label}: answered per second, client on the same cores (${ok.toLocaleString('en-US')} ok, ${failed} failed)`,
				value: round(perSecond),
				unit: '/s',
			},
			{
				figure: `${label}: capacity per core of the sandbox (answered per CPU second it used)`,
				value: round(perCore),
				unit: '/s',
			},
		);
		const uses = name === 'status' ? [] : need[name];
		if (uses.length === 0) {
			figures.push({
				figure: `${label}: headroom`,
				value: name === 'status' ? 'not called by benchmarks 1 to 4' : 'no figures of benchmarks 1 to 4 yet',
			});
			continue;
		}
		const [where, most] = uses.reduce((best, entry) => (entry[1] > best[1] ? entry : best));
		for (const [source, rate] of uses)
			figures.push({
				figure: `${label}: headroom per core over ${source} (${round(rate)}/s)`,
				value: `${round(perCore / rate, 1)}x`,
			});
		figures.push({
			figure: `${label}: never the bottleneck (capacity per core over the highest, ${where})`,
			value: `${round(perCore / most, 2)}x`,
			target: '> 1x',
			met: perCore > most,
		});
	}
	return {
		name: 'sandbox',
		title: "Benchmark 5: the sandbox's capacity",
		quick: seconds !== 6,
		startedAt: new Date(started).toISOString(),
		seconds: (Date.now() - started) / 1000,
		figures,
		notes: [
			`${seconds} s per call after a warm-up, ${WORKERS} requests in flight from one client process on the same 2 cores: answered per second is a lower bound.`,
			'Capacity per core: calls answered / CPU seconds of the sandbox process (utime + stime of every thread), the rate one core of its own would serve.',
		],
		details: { measured, needs: need },
	};
}
