/**
 * What one send costs Redis, by command: `npx tsx bench/sendCommands.ts [recipients] [rate] [--cpu]`
 * (defaults 500 at 200/s; `--cpu`: no MONITOR, which costs Redis time of its own, and Redis's time
 * per recipient instead: INFO commandstats usec and calls by command and INFO cpu, as the memory
 * benchmark measures them, and each script's calls and time from the slow log). A private redis-server, the sandbox and one worker (as the tests spawn
 * them); the campaign is created in this process, then MONITOR counts every command Redis runs
 * until the campaign completes: those a client sent (its round trips; a script is one) and those
 * the scripts ran inside. Redis-wide, so the worker's idle polling and the status checks (twice a
 * second) are in it too. Not part of `npm run bench`: a quick look at the send path (issue #20).
 */
import { Redis } from 'ioredis';

import { createCampaign, campaignStatus } from '../runner/src/core/campaigns';
import { startPrivateRedis } from '../runner/src/devRedis';
import { monitorCommands, positionalTemplate, writeRecipientsCsv } from '../test/runner/support';
import { callsBetween, commandCalls, commandMicros, rateFigures, redisCpuSeconds } from './lib/common';
import { sendsFrom, startStack, waitForCompletion } from './lib/stack';

const perRecipient = (counts: Map<string, number>, recipients: number) =>
	[...counts]
		.sort((a, b) => b[1] - a[1])
		.map(([command, n]) => `${command} ${(n / recipients).toFixed(2)}`)
		.join('\n  ');

/** A script is named by its SHA's start and the shape of its first key (ids and numbers left out). */
const scriptName = (args: string[]) =>
	`${args[1].slice(0, 6)} (${(args[3] ?? '').replace(/[0-9a-f]{8,}|c[0-9a-z]{12,}|\d+/g, '*')})`;

const quantile = (values: number[], q: number) =>
	[...values].sort((a, b) => a - b)[Math.floor(q * (values.length - 1))];

/** Redis's time so far: INFO commandstats calls and usec by command, their sum, and the server process's CPU seconds. */
async function redisTime(redis: Redis) {
	const usec = new Map<string, number>();
	for (const match of (await redis.info('commandstats')).matchAll(/cmdstat_(\S+?):calls=\d+,usec=(\d+)/g))
		usec.set(match[1], Number(match[2]));
	return {
		calls: await commandCalls(redis),
		usec,
		micros: await commandMicros(redis),
		cpu: await redisCpuSeconds(redis),
	};
}

async function main(): Promise<void> {
	const recipients = Number(process.argv[2] ?? 500);
	const rate = Number(process.argv[3] ?? 200);
	const cpu = process.argv.includes('--cpu');
	const redisServer = await startPrivateRedis();
	const stack = await startStack(redisServer.url, { concurrency: 50, latencyMs: 0, processes: 1 });
	const base = new Redis(redisServer.url);
	await base.ping();
	const monitor = cpu ? undefined : await monitorCommands(base);
	const client = new Map<string, number>();
	const inScripts = new Map<string, number>();
	// A script's own commands follow its call in MONITOR's stream (Redis runs one thing at a time).
	const byScript = new Map<string, number>();
	let lastScript = '';
	let counting = false;
	monitor?.on('monitor', (_time: string, args: string[], source: string) => {
		if (!counting) return;
		const counts = source === 'lua' ? inScripts : client;
		const name = args[0].toUpperCase() === 'EVALSHA' ? `EVALSHA ${scriptName(args)}` : args[0].toUpperCase();
		counts.set(name, (counts.get(name) ?? 0) + 1);
		if (source !== 'lua') lastScript = name.startsWith('EVALSHA ') ? name.slice(8, 14) : '';
		else byScript.set(`${lastScript} ${name}`, (byScript.get(`${lastScript} ${name}`) ?? 0) + 1);
	});
	try {
		const { path } = writeRecipientsCsv(recipients, { seed: 41 });
		// The worker's start-up and the create are not the send path: counting starts once the campaign exists.
		await new Promise((resolve) => setTimeout(resolve, 3000));
		counting = true;
		// Every script call's time in the slow log: commandstats has the scripts' time only as one sum.
		if (cpu)
			await base
				.config('SET', 'slowlog-log-slower-than', '0', 'slowlog-max-len', '1000000')
				.then(() => base.slowlog('RESET'));
		const before = cpu ? await redisTime(base) : undefined;
		const created = await createCampaign(stack.context, {
			templateId: positionalTemplate(stack.business).id,
			from: stack.business.phoneNumbers[0],
			source: path,
			rate,
		});
		if (created.kind !== 'campaign') throw new Error('expected a campaign');
		await waitForCompletion(stack, created.id, recipients, rate);
		counting = false;
		const after = before ? await redisTime(base) : undefined;
		const status = await campaignStatus(stack.context, created.id);
		const total = (counts: Map<string, number>) => [...counts.values()].reduce((sum, n) => sum + n, 0);
		const rates = rateFigures((await sendsFrom(stack)).map((message) => Date.parse(message.createdAt)));
		console.log(
			`${recipients} recipients at ${rate}/s, state ${status.state}, sent ${status.counts.sent}; the sandbox saw ${rates.count}, ${rates.steadyRate.toFixed(1)}/s steady, at most ${rates.maxSliding} in a sliding second`,
		);
		if (before && after) {
			const calls = callsBetween(before.calls, after.calls);
			console.log(
				`Redis CPU per recipient: commandstats usec ${((after.micros - before.micros) / recipients).toFixed(1)} µs, server process ${(((after.cpu - before.cpu) * 1e6) / recipients).toFixed(1)} µs`,
			);
			console.log(
				`commandstats calls per recipient: ${([...calls.values()].reduce((sum, n) => sum + n, 0) / recipients).toFixed(2)}`,
			);
			console.log(`  ${perRecipient(calls, recipients)}`);
			const scripts = new Map<string, number[]>();
			for (const [, , usec, args] of (await base.slowlog('GET', -1)) as Array<[number, number, number, string[]]>) {
				if (String(args[0]).toUpperCase() !== 'EVALSHA') continue;
				const name = scriptName(args);
				scripts.set(name, [...(scripts.get(name) ?? []), usec]);
			}
			const sum = (values: number[]) => values.reduce((total, n) => total + n, 0);
			console.log(
				`EVALSHA per recipient (slow log): calls, usec\n  ${[...scripts]
					.sort((a, b) => sum(b[1]) - sum(a[1]))
					.map(
						([name, each]) =>
							`${name} ${(each.length / recipients).toFixed(2)} ${(sum(each) / recipients).toFixed(1)} (median ${quantile(each, 0.5)}, p90 ${quantile(each, 0.9)} each)`,
					)
					.join('\n  ')}`,
			);
			const micros = callsBetween(before.usec, after.usec);
			console.log(
				`commandstats usec per recipient, by command:\n  ${[...micros].map(([command, n]) => `${command} ${(n / recipients).toFixed(1)}`).join('\n  ')}`,
			);
			return;
		}
		console.log(`client commands (round trips) per recipient: ${(total(client) / recipients).toFixed(2)}`);
		console.log(`  ${perRecipient(client, recipients)}`);
		console.log(`commands inside scripts per recipient: ${(total(inScripts) / recipients).toFixed(2)}`);
		console.log(`  ${perRecipient(inScripts, recipients)}`);
		console.log(
			`  by script (its SHA's start), the top 25:\n  ${perRecipient(byScript, recipients).split('\n').slice(0, 25).join('\n')}`,
		);
		console.log(`all commands per recipient: ${((total(client) + total(inScripts)) / recipients).toFixed(2)}`);
	} finally {
		monitor?.disconnect();
		base.disconnect();
		await stack.close();
		await redisServer.stop();
	}
	// The stack's clients keep retrying the stopped Redis; nothing is left to wait for.
	process.exit(0);
}

main().catch((error: unknown) => {
	console.error(error);
	process.exit(1);
});
