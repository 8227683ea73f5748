/**
 * Benchmark 10: what send windows cost (#23) at 1,000,000 recipients over 24 time zones (a `tz`
 * column cycling through 24 zones from -11 to +12). The campaign is created in this process
 * through core (as the CLI does), and the feeder's pass (feedOnce) is timed with the campaign
 * running and no worker taking its jobs. Figures:
 *
 *   Redis bytes of the per-zone index lists (MEMORY USAGE of keys.zoneIndexes, whole) and of the
 *   whole campaign (used_memory before and after the create), per recipient and at 1,000,000
 *   peak RSS of this process during the create (sampled every 200 ms)
 *   the feeder's pass: with room in the queue (it reads each open zone's list and the ledger of
 *   what it feeds: one window of jobs), and with the queue full (a look at each zone's clock only)
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Redis } from 'ioredis';

import { loadConfig } from '../runner/src/config';
import { createCampaign } from '../runner/src/core/campaigns';
import { feedOnce } from '../runner/src/sending/feeder';
import { createLogger } from '../runner/src/log';
import { closeContext, openContext } from '../runner/src/runtime';
import { QUICK, round, sampleMax, size, usedMemory, type BenchResult, type Figure } from './lib/common';

/** 24 zones, one per hour from -11 to +12 (no daylight saving time in any, so the spread holds all year). */
const ZONES = [
	'Pacific/Pago_Pago',
	'Pacific/Honolulu',
	'Pacific/Marquesas',
	'America/Anchorage',
	'America/Phoenix',
	'America/Regina',
	'America/Bogota',
	'America/Caracas',
	'America/Sao_Paulo',
	'America/Noronha',
	'Atlantic/Cape_Verde',
	'Africa/Abidjan',
	'Africa/Lagos',
	'Africa/Johannesburg',
	'Europe/Moscow',
	'Asia/Dubai',
	'Asia/Karachi',
	'Asia/Dhaka',
	'Asia/Bangkok',
	'Asia/Shanghai',
	'Asia/Tokyo',
	'Australia/Brisbane',
	'Pacific/Noumea',
	'Pacific/Fiji',
];

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

export async function benchWindows(redisUrl: string): Promise<BenchResult> {
	const started = Date.now();
	const recipients = size(1_000_000, 50_000);
	const dir = mkdtempSync(join(tmpdir(), 'convo-bench-windows-'));
	const file = join(dir, 'audience.csv');
	// Written 10,000 rows at a time, so the create's peak RSS is not the audience held here.
	writeFileSync(file, 'phone,tz,1\n');
	for (let first = 0; first < recipients; first += 10_000) {
		const rows: string[] = [];
		for (let i = first; i < Math.min(recipients, first + 10_000); i++)
			rows.push(`+4917${String(i).padStart(9, '0')},${ZONES[i % ZONES.length]},x\n`);
		appendFileSync(file, rows.join(''));
	}

	const prefix = `bench-windows-${Date.now().toString(36)}`;
	const context = await openContext(
		loadConfig({ REDIS_URL: redisUrl, RUNNER_PREFIX: prefix, RUNNER_MAX_RECIPIENTS: String(recipients) }),
		createLogger('silent'),
		{ withService: false },
	);
	const raw = new Redis(redisUrl);
	try {
		const before = await usedMemory(raw);
		const rss = sampleMax(async () => process.memoryUsage().rss, 200);
		const createStarted = Date.now();
		// Every hour of the day some zone is open: 09:00-20:00 in each recipient's time.
		const created = await createCampaign(context, {
			templateId: randomUUID(),
			from: '4930100200',
			source: file,
			rate: 1000,
			window: '09:00-20:00',
		});
		const createSeconds = (Date.now() - createStarted) / 1000;
		const peakRss = await rss.stop();
		if (created.kind !== 'campaign') throw new Error('expected a campaign');
		const after = await usedMemory(raw);
		const zoneBytes = Number(
			await raw.call('MEMORY', 'USAGE', context.keys.zoneIndexes('4930100200', created.id), 'SAMPLES', '0'),
		);

		// The feeder: passes with room (the queue emptied before each), then passes with the queue full.
		const queue = context.queues.send('4930100200');
		const withRoom: number[] = [];
		for (let pass = 0; pass < size(10, 3); pass++) {
			await queue.obliterate({ force: true });
			const at = performance.now();
			await feedOnce(context);
			withRoom.push(performance.now() - at);
		}
		const full: number[] = [];
		for (let pass = 0; pass < size(20, 5); pass++) {
			const at = performance.now();
			await feedOnce(context);
			full.push(performance.now() - at);
		}
		const fed = (await queue.getJobCounts('waiting', 'prioritized', 'delayed')) as Record<string, number>;
		await queue.obliterate({ force: true });

		const perRecipient = zoneBytes / recipients;
		const figures: Figure[] = [
			{ figure: 'per-zone index lists, Redis bytes per recipient', value: round(perRecipient, 2), unit: 'B' },
			{
				figure: 'per-zone index lists at 1,000,000 recipients',
				value: round((perRecipient * 1_000_000) / 1024 / 1024, 1),
				unit: 'MB',
			},
			{
				figure: 'whole windowed campaign, Redis bytes per recipient (used_memory)',
				value: round((after - before) / recipients, 1),
				unit: 'B',
			},
			{
				figure: `create of ${recipients.toLocaleString('en-US')} rows in 24 zones, wall time`,
				value: round(createSeconds, 1),
				unit: 's',
			},
			{ figure: 'create, peak RSS of the creating process', value: round(peakRss / 1024 / 1024), unit: 'MB' },
			{
				figure: 'feeder pass with room (feeds one window of jobs), median',
				value: round(median(withRoom), 1),
				unit: 'ms',
			},
			{
				figure: 'feeder pass with the queue full (zone clocks only), median',
				value: round(median(full), 1),
				unit: 'ms',
			},
		];
		return {
			name: 'windows',
			title: 'Benchmark 10: send windows at 1,000,000 recipients over 24 zones',
			quick: QUICK,
			startedAt: new Date(started).toISOString(),
			seconds: (Date.now() - started) / 1000,
			figures,
			notes: [
				`${recipients.toLocaleString('en-US')} recipients, a tz column cycling through 24 zones (-11 to +12), window 09:00-20:00, rate 1,000/s (a window of 500 jobs of 10); the create in this benchmark's own process (its RSS includes the benchmark)`,
				`feeder passes timed in-process against the bench's Redis, no worker taking the jobs: ${withRoom.length} with the queue emptied first, ${full.length} with it full (${Object.values(fed).reduce((sum, n) => sum + n, 0)} jobs queued after them)`,
				'the machine is shared with other work while this runs (2 cores): times are upper figures',
			],
		};
	} finally {
		await raw
			.eval(
				`for _, key in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('UNLINK', key) end return 1`,
				0,
				`${prefix}:*`,
			)
			.catch(() => undefined);
		raw.disconnect();
		await closeContext(context);
		rmSync(dir, { recursive: true, force: true });
	}
}
