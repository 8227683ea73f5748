/**
 * The send path's two scripts alone: `npx tsx bench/gateScripts.ts [recipients] [volley] [runs]`
 * (defaults 20,000, 10 and 3). A private redis-server holds a running campaign; this process claims
 * it volley by volley through start-11.lua and settles each volley as sent through
 * settleAndPlace-9.lua, as a worker does, with no rate span to wait on, no worker, sandbox or
 * BullMQ beside it. Prints Redis's time per recipient (commandstats usec and the server's CPU) and
 * commands per recipient for each run: a steadier figure of the scripts' own cost than
 * sendCommands.ts, whose Redis shares two cores with the rest of the stack. Not part of `npm run bench`.
 */
import { Redis } from 'ioredis';

import { startPrivateRedis } from '../runner/src/devRedis';
import { SEND_JOB_SIZE } from '../runner/src/jobs';
import { redisScript } from '../runner/src/redisScripts';
import { startScriptArgs } from '../test/runner/support';
import { commandCalls, commandMicros, redisCpuSeconds } from './lib/common';

async function main(): Promise<void> {
	const recipients = Number(process.argv[2] ?? 20_000);
	const volley = Number(process.argv[3] ?? 10);
	const runs = Number(process.argv[4] ?? 3);
	const pauseMs = Number(process.argv[5] ?? 0);
	const server = await startPrivateRedis();
	const redis = new Redis(server.url);
	const start = redisScript(redis, 'start');
	const settle = redisScript(redis, 'settleAndPlace');
	try {
		for (let run = 1; run <= runs; run++) {
			const prefix = `gate${run}:{n}:`;
			const names = ['spacing', 'log', 'meta', 'ledger', 'running', 'outbox', 'rows', 'suppressed', 'policy', 'sends'];
			const keys = [...names, 'waiting'].map((name) => prefix + name);
			const [spacing, , meta, ledger, running, outbox, rows] = keys;
			// A rate high enough that the span never waits, with a volley span that gives `volley` starts a call.
			await redis.hset(spacing, 'rate', 1_000_000);
			await redis.hset(meta, { state: 'running', n_p: recipients, n_c: 0 });
			await redis.sadd(running, 'c1');
			for (let from = 0; from < recipients; from += 1000) {
				const pipeline = redis.pipeline();
				for (let index = from; index < Math.min(from + 1000, recipients); index++) {
					pipeline.hset(ledger, index, 'p|0||||');
					pipeline.hset(rows, index, `[${index + 2},"4915277${String(index).padStart(6, '0')}",{"1":"Ada"}]`);
				}
				await pipeline.exec();
			}
			const callsBefore = sum(await commandCalls(redis));
			const microsBefore = await commandMicros(redis);
			const cpuBefore = await redisCpuSeconds(redis);
			for (let first = 0; first < recipients; first += SEND_JOB_SIZE) {
				const end = Math.min(first + SEND_JOB_SIZE, recipients);
				for (let at = first; at < end; at += volley) {
					const reply = (await start(
						keys,
						startScriptArgs({ member: `g${at}`, range: [at, end], volleyMs: (volley * 1000) / 1_000_000 }, 0.04),
					)) as Array<number | string | null>;
					if (reply[0] !== 0) throw new Error(`start answered ${JSON.stringify(reply)}`);
					const claimed = reply.slice(2).filter((_, k) => k % 3 === 0) as number[];
					await settle(
						[meta, ledger, running, outbox, `${prefix}ticks`, spacing, rows, `${prefix}sends`, `${prefix}daily`],
						[
							Date.now(),
							10,
							'c1',
							end,
							0.04,
							(volley * 1000) / 1_000_000,
							't',
							'',
							...claimed.flatMap((index) => [index, 's', `m${index}`, '']),
						],
					);
					if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
				}
			}
			const calls = sum(await commandCalls(redis)) - callsBefore;
			const micros = (await commandMicros(redis)) - microsBefore;
			const cpu = (await redisCpuSeconds(redis)) - cpuBefore;
			const state = await redis.hmget(meta, 'state', 'n_s');
			console.log(
				`run ${run}: ${recipients} recipients in volleys of ${volley}, campaign ${state[0]} with ${state[1]} sent; ` +
					`Redis per recipient: commandstats ${(micros / recipients).toFixed(1)} µs, server CPU ${((cpu * 1e6) / recipients).toFixed(1)} µs, ${(calls / recipients).toFixed(2)} commands`,
			);
		}
	} finally {
		redis.disconnect();
		await server.stop();
	}
}

const sum = (counts: Map<string, number>) => [...counts.values()].reduce((total, n) => total + n, 0);

main().catch((error: unknown) => {
	console.error(error);
	process.exit(1);
});
