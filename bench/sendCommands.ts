/**
 * What one send costs Redis, by command: `npx tsx bench/sendCommands.ts [recipients] [rate]`
 * (defaults 500 at 200/s). A private redis-server, the sandbox and one worker (as the tests spawn
 * them); the campaign is created in this process, then MONITOR counts every command Redis runs
 * until the campaign completes: those a client sent (its round trips; a script is one) and those
 * the scripts ran inside. Redis-wide, so the worker's idle polling and the status checks (twice a
 * second) are in it too. Not part of `npm run bench`: a quick look at the send path (issue #20).
 */
import { Redis } from 'ioredis';

import { createCampaign, campaignStatus } from '../runner/src/core';
import { startPrivateRedis } from '../runner/src/devRedis';
import { positionalTemplate, writeRecipientsCsv } from '../test/runner/support';
import { rateFigures } from './lib/common';
import { sendsFrom, startStack, waitForCompletion } from './lib/stack';

const perRecipient = (counts: Map<string, number>, recipients: number) =>
	[...counts]
		.sort((a, b) => b[1] - a[1])
		.map(([command, n]) => `${command} ${(n / recipients).toFixed(2)}`)
		.join('\n  ');

async function main(): Promise<void> {
	const recipients = Number(process.argv[2] ?? 500);
	const rate = Number(process.argv[3] ?? 200);
	const redisServer = await startPrivateRedis();
	const stack = await startStack(redisServer.url, { concurrency: 50, latencyMs: 0, processes: 1 });
	const base = new Redis(redisServer.url);
	await base.ping();
	const monitor = await base.monitor();
	const client = new Map<string, number>();
	const inScripts = new Map<string, number>();
	let counting = false;
	monitor.on('monitor', (_time: string, args: string[], source: string) => {
		if (!counting) return;
		const counts = source === 'lua' ? inScripts : client;
		// A script is named by its SHA's start and the shape of its first key (ids and numbers left out).
		const name = args[0].toUpperCase() === 'EVALSHA' ? `EVALSHA ${args[1].slice(0, 6)} (${(args[3] ?? '').replace(/[0-9a-f]{8,}|c[0-9a-z]{12,}|\d+/g, '*')})` : args[0].toUpperCase();
		counts.set(name, (counts.get(name) ?? 0) + 1);
	});
	try {
		const { path } = writeRecipientsCsv(recipients, { seed: 41 });
		// The worker's start-up and the create are not the send path: counting starts once the campaign exists.
		await new Promise((resolve) => setTimeout(resolve, 3000));
		counting = true;
		const created = await createCampaign(stack.context, { templateId: positionalTemplate(stack.business).id, from: stack.business.phoneNumbers[0], source: path, rate });
		if (created.kind !== 'campaign') throw new Error('expected a campaign');
		await waitForCompletion(stack, created.id, recipients, rate);
		counting = false;
		const status = await campaignStatus(stack.context, created.id);
		const total = (counts: Map<string, number>) => [...counts.values()].reduce((sum, n) => sum + n, 0);
		const rates = rateFigures((await sendsFrom(stack)).map((message) => Date.parse(message.createdAt)));
		console.log(`${recipients} recipients at ${rate}/s, state ${status.state}, sent ${status.counts.sent}; the sandbox saw ${rates.count}, ${rates.steadyRate.toFixed(1)}/s steady, at most ${rates.maxSliding} in a sliding second`);
		console.log(`client commands (round trips) per recipient: ${(total(client) / recipients).toFixed(2)}`);
		console.log(`  ${perRecipient(client, recipients)}`);
		console.log(`commands inside scripts per recipient: ${(total(inScripts) / recipients).toFixed(2)}`);
		console.log(`  ${perRecipient(inScripts, recipients)}`);
		console.log(`all commands per recipient: ${((total(client) + total(inScripts)) / recipients).toFixed(2)}`);
	} finally {
		monitor.disconnect();
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
