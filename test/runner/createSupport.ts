/**
 * Creates held at a real point of their work, for the files that kill them there
 * (createCrash.test.ts, createLease.test.ts): the recipients come as a CSV upload the test streams
 * itself, or as JSON with an Idempotency-Key; and what Redis and the sandbox hold afterwards.
 */
import { request as httpRequest } from 'node:http';

import {
	positionalTemplate,
	scanKeys,
	startApi,
	templateSends,
	type RunnerUnderTest,
	type SpawnedRunner,
} from './support';

export const phoneOf = (seed: number, i: number) => `4915${String(seed).padStart(3, '0')}${String(i).padStart(6, '0')}`;
export const phonesOf = (seed: number, count: number) => Array.from({ length: count }, (_, i) => phoneOf(seed, i));
export const csvLines = (phones: string[]) => phones.map((phone, i) => `+${phone},Customer ${i},order ${i}\n`).join('');

export interface Upload {
	write(text: string): void;
	end(text?: string): void;
	answer: Promise<{ status: number; json: Record<string, unknown> } | { error: string }>;
}

/** The helpers of one file's runner (`useRunnerUnderTest`) whose API answers `token`. */
export function createKit(runner: RunnerUnderTest, token: string) {
	const settings = () => ({
		template_id: positionalTemplate(runner.business).id,
		from: runner.business.phoneNumbers[0],
		rate: '500',
	});

	/** `convo-runner start` with its API; the process, to kill it. */
	async function startRunner(): Promise<{ base: string; process: SpawnedRunner }> {
		const base = await startApi(runner);
		return { base, process: runner.processes[runner.processes.length - 1] };
	}

	/** A CSV upload to POST /api/campaigns streamed by the test: the create reads rows as they come. */
	function upload(base: string, key?: string): Upload {
		const url = new URL(`/api/campaigns?${new URLSearchParams(settings())}`, base);
		const outgoing = httpRequest(url, {
			method: 'POST',
			headers: {
				authorization: `Bearer ${token}`,
				'content-type': 'text/csv',
				...(key ? { 'idempotency-key': key } : {}),
			},
		});
		const answer = new Promise<Awaited<Upload['answer']>>((resolve) => {
			outgoing.on('response', (response) => {
				let text = '';
				response.on('data', (chunk) => (text += String(chunk)));
				response.on('end', () => resolve({ status: response.statusCode ?? 0, json: text ? JSON.parse(text) : {} }));
				response.on('error', (error) => resolve({ error: error.message }));
			});
			outgoing.on('error', (error) => resolve({ error: error.message }));
		});
		outgoing.write('phone,1,2\n');
		return { write: (text) => outgoing.write(text), end: (text) => outgoing.end(text), answer };
	}

	async function createJson(base: string, key: string, phones: string[]) {
		const response = await fetch(`${base}/api/campaigns`, {
			method: 'POST',
			headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
			body: JSON.stringify({
				...settings(),
				rate: 500,
				recipients: phones.map((phone, i) => ({ phone, 1: `Customer ${i}`, 2: `order ${i}` })),
			}),
		});
		return { status: response.status, json: (await response.json()) as Record<string, unknown> };
	}

	const prefix = () => String(runner.env.RUNNER_PREFIX);
	const stagedKeys = async () =>
		(await scanKeys(runner.context.redis, prefix())).filter((key) => key.includes(':staging:'));
	const ledgerKeys = async () =>
		(await scanKeys(runner.context.redis, prefix())).filter((key) => key.endsWith(':ledger'));

	/** Rows written so far to ledger hashes (staged or not) that were not there `before`. */
	async function rowsWrittenSince(before: string[]): Promise<number> {
		let rows = 0;
		for (const key of (await ledgerKeys()).filter((k) => !before.includes(k)))
			rows += await runner.context.redis.hlen(key);
		return rows;
	}

	async function sendsTo(phones: string[]): Promise<Map<string, number>> {
		const wanted = new Set(phones);
		const counts = new Map<string, number>();
		for (const message of await templateSends(runner.sandbox))
			if (wanted.has(message.to)) counts.set(message.to, (counts.get(message.to) ?? 0) + 1);
		return counts;
	}

	/** Every key under the prefix that holds a campaign's rows or record, for campaigns not listed, and without an expiry. */
	async function keptForGood(listed: Set<string>): Promise<string[]> {
		const left: string[] = [];
		for (const key of await scanKeys(runner.context.redis, prefix())) {
			const match = /:campaign:([^:]+)(:|$)|:staging:/.exec(key);
			if (!match || (match[1] && listed.has(match[1]))) continue;
			if ((await runner.context.redis.pttl(key)) < 0) left.push(key);
		}
		return left;
	}

	return { startRunner, upload, createJson, stagedKeys, ledgerKeys, rowsWrittenSince, sendsTo, keptForGood };
}
