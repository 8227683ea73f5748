/**
 * What each master of a Redis Cluster holds and does for one runner prefix: its keys, their memory,
 * the commands it ran (INFO commandstats, after minus before), and which sending numbers' groups
 * its slots hold (runner/src/keys.ts). The cluster test and the cluster benchmark print these.
 */
import { Cluster, type Redis } from 'ioredis';

import type { Keys } from '../../runner/src/keys';
import { masters, type RedisConnection } from '../../runner/src/redis';
import { scanKeys } from './support';

const addressOf = (node: Redis) => `${node.options.host}:${node.options.port}`;

/** Commands each master has run since it started (every command, whoever sent it), by address. */
export async function commandsRun(redis: RedisConnection): Promise<Map<string, number>> {
	const counts = new Map<string, number>();
	for (const node of masters(redis)) {
		const info = await node.info('commandstats');
		counts.set(
			addressOf(node),
			[...info.matchAll(/calls=(\d+)/g)].reduce((sum, match) => sum + Number(match[1]), 0),
		);
	}
	return counts;
}

/** The master address that serves each of `numbers` (where its group's slot is); one Redis serves them all. */
export async function numbersByMaster(
	redis: RedisConnection,
	keys: Keys,
	numbers: readonly string[],
): Promise<Map<string, string[]>> {
	const [first] = masters(redis);
	if (!(redis instanceof Cluster)) return new Map([[addressOf(first), [...numbers]]]);
	const ranges = await first.cluster('SLOTS');
	const byMaster = new Map(masters(redis).map((node) => [addressOf(node), [] as string[]]));
	for (const from of numbers) {
		const slot = Number(await first.cluster('KEYSLOT', keys.spacing(from)));
		const range = ranges.find(([start, end]) => slot >= start && slot <= end);
		if (!range) throw new Error(`no master serves slot ${slot}`);
		const [host, port] = range[2];
		byMaster.get(`${host}:${port}`)?.push(from);
	}
	return byMaster;
}

export interface MasterShare {
	address: string;
	/** Sending numbers whose group this master holds. */
	numbers: string[];
	keys: number;
	/** Bytes of the prefix's keys (MEMORY USAGE, summed). */
	memory: number;
	/** Commands run between `before` and now. */
	commands: number;
}

/** Each master's keys, memory and commands for `prefix`; call before anything else touches the cluster after the run. */
export async function masterShares(
	redis: RedisConnection,
	keys: Keys,
	numbers: readonly string[],
	before: Map<string, number>,
): Promise<MasterShare[]> {
	const after = await commandsRun(redis);
	const homes = await numbersByMaster(redis, keys, numbers);
	const shares: MasterShare[] = [];
	for (const node of masters(redis)) {
		const address = addressOf(node);
		const found = await scanKeys(node, keys.prefix);
		const usage = node.pipeline();
		for (const key of found) usage.memory('USAGE', key);
		const answers = found.length > 0 ? ((await usage.exec()) ?? []) : [];
		const memory = answers.reduce((sum, [, bytes]) => sum + Number(bytes ?? 0), 0);
		shares.push({
			address,
			numbers: homes.get(address) ?? [],
			keys: found.length,
			memory,
			commands: (after.get(address) ?? 0) - (before.get(address) ?? 0),
		});
	}
	return shares;
}

/** Each master's part of a figure, 0..1. */
export function partOf(shares: MasterShare[], figure: 'keys' | 'memory' | 'commands'): number[] {
	const total = shares.reduce((sum, share) => sum + share[figure], 0);
	return shares.map((share) => (total === 0 ? 0 : share[figure] / total));
}

/** A table of the shares, one master a line. */
export function sharesTable(shares: MasterShare[]): string {
	const percent = (part: number) => `${(100 * part).toFixed(1)}%`.padStart(6);
	const [keys, memory, commands] = (['keys', 'memory', 'commands'] as const).map((figure) => partOf(shares, figure));
	const lines = shares.map(
		(share, i) =>
			`${share.address.padEnd(16)} numbers ${String(share.numbers.length).padStart(2)}   keys ${String(share.keys).padStart(6)} ${percent(keys[i])}   memory ${(share.memory / 1024).toFixed(0).padStart(7)} KiB ${percent(memory[i])}   commands ${String(share.commands).padStart(8)} ${percent(commands[i])}`,
	);
	return lines.join('\n');
}
