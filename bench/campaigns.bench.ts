/**
 * Benchmark 1: a campaign's sending rate against the sandbox, counted in the sandbox's log.
 *
 *   limited    10,000 recipients, 50 ms latency, 100/s on one number, one runner process
 *   unlimited  10,000 recipients, 200 ms latency, the limit off (1,000/s, the runner's most),
 *              RUNNER_CONCURRENCY 50: the ideal is 50 / 0.2 s = 250/s
 *   shared     10,000 recipients, 50 ms latency, 200/s on one number, two runner processes
 *
 * The sustained rate is the middle 90% of the sends (the 5% to the 95% send by the sandbox's
 * clock), so process start-up and the last stragglers do not count.
 */
import { round, size, type BenchResult, type Figure } from './lib/common';
import { rateFigures } from './lib/common';
import { runCampaign, sendsFrom, startStack, workerPeaksMb, type StackOptions } from './lib/stack';

interface Scenario extends StackOptions {
	name: string;
	rate: number;
	/** The rate the sustained rate is judged against, and the share of it to reach. */
	ideal: number;
	share: number;
	capEverySecond: boolean;
}

export interface CampaignScenarioResult {
	name: string;
	recipients: number;
	sends: number;
	distinctPhones: number;
	steadyRate: number;
	spanSeconds: number;
	maxSliding: number;
	maxCalendar: number;
	peakRssMb: number[];
	settings: StackOptions & { rate: number };
}

export async function benchCampaigns(redisUrl: string): Promise<BenchResult> {
	const started = Date.now();
	const recipients = size(10_000, 1_000);
	const scenarios: Scenario[] = [
		{
			name: 'limited',
			rate: 100,
			latencyMs: 50,
			concurrency: 10,
			processes: 1,
			ideal: 100,
			share: 0.95,
			capEverySecond: false,
		},
		{
			name: 'unlimited',
			rate: 1000,
			latencyMs: 200,
			concurrency: 50,
			processes: 1,
			ideal: 250,
			share: 0.9,
			capEverySecond: false,
		},
		{
			name: 'shared',
			rate: 200,
			latencyMs: 50,
			concurrency: 10,
			processes: 2,
			ideal: 200,
			share: 0.95,
			capEverySecond: true,
		},
	];
	const figures: Figure[] = [];
	const runs: CampaignScenarioResult[] = [];
	for (const [index, scenario] of scenarios.entries()) {
		const stack = await startStack(redisUrl, scenario);
		try {
			const { phones } = await runCampaign(stack, recipients, scenario.rate, 10 + index);
			const peaks = workerPeaksMb(stack);
			const sends = await sendsFrom(stack);
			const mine = new Set(phones);
			// When each send reached the service (its arrival, before the injected latency), as the channel counts it.
			const rates = rateFigures(sends.map((message) => Date.parse(message.request?.receivedAt ?? message.createdAt)));
			const run: CampaignScenarioResult = {
				name: scenario.name,
				recipients,
				sends: sends.length,
				distinctPhones: new Set(sends.filter((message) => mine.has(message.to)).map((message) => message.to)).size,
				steadyRate: round(rates.steadyRate, 1),
				spanSeconds: round(rates.spanSeconds, 1),
				maxSliding: rates.maxSliding,
				maxCalendar: rates.maxCalendar,
				peakRssMb: peaks.map((peak) => round(peak)),
				settings: {
					rate: scenario.rate,
					latencyMs: scenario.latencyMs,
					concurrency: scenario.concurrency,
					processes: scenario.processes,
				},
			};
			runs.push(run);
			const label = `${scenario.name} (${scenario.processes} process${scenario.processes > 1 ? 'es' : ''}, ${scenario.latencyMs} ms, ${scenario.rate === 1000 ? 'limit off' : `${scenario.rate}/s`}, concurrency ${scenario.concurrency})`;
			const floor = scenario.ideal * scenario.share;
			figures.push(
				{
					figure: `${label}: sends in the sandbox log`,
					value: run.sends,
					target: `exactly ${recipients.toLocaleString('en-US')}, each phone once`,
					met: run.sends === recipients && run.distinctPhones === recipients,
				},
				{
					figure: `${scenario.name}: sustained rate`,
					value: run.steadyRate,
					unit: '/s',
					target: `>= ${scenario.share} x ${scenario.ideal}/s = ${floor}/s`,
					met: run.steadyRate >= floor,
				},
				{
					figure: `${scenario.name}: sustained / ${scenario.rate === 1000 ? 'ideal' : 'limit'}`,
					value: round(run.steadyRate / scenario.ideal, 3),
				},
			);
			if (scenario.capEverySecond) {
				figures.push(
					{
						figure: `${scenario.name}: most sends in any sliding second`,
						value: run.maxSliding,
						target: `<= ${scenario.rate}`,
						met: run.maxSliding <= scenario.rate,
					},
					{
						figure: `${scenario.name}: most sends in one clock second`,
						value: run.maxCalendar,
						target: `<= ${scenario.rate}`,
						met: run.maxCalendar <= scenario.rate,
					},
				);
			} else {
				figures.push({ figure: `${scenario.name}: most sends in any sliding second`, value: run.maxSliding });
			}
			figures.push({ figure: `${scenario.name}: runner peak RSS`, value: run.peakRssMb.join(' + '), unit: 'MB' });
		} finally {
			await stack.close();
		}
	}
	return {
		name: 'campaigns',
		title: 'Benchmark 1: campaign rate against the sandbox',
		quick: recipients !== 10_000,
		startedAt: new Date(started).toISOString(),
		seconds: (Date.now() - started) / 1000,
		figures,
		notes: [
			`${recipients.toLocaleString('en-US')} recipients per scenario; sustained rate = the middle 90% of the sends (the 5% to the 95% send), both by the sandbox's arrival time of each send (request.receivedAt).`,
			'Limit off = --rate 1000, the most the runner takes, far above what 50 sends in flight at 200 ms can do (250/s).',
		],
		details: { runs },
	};
}
