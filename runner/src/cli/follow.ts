/**
 * Following a campaign until it settles: a progress bar on a terminal (cli-progress, on stderr so
 * stdout keeps the command's result), a line every few seconds elsewhere.
 */
import { SingleBar } from 'cli-progress';

import type { RunnerContext } from '../context';
import { campaignStatus, type CampaignStatus } from '../campaigns/store';

const SETTLED = new Set(['completed', 'cancelled', 'failed', 'paused']);

const eta = (seconds: number | null) => (seconds === null ? '?' : seconds < 90 ? `${seconds}s` : `${Math.round(seconds / 60)}m`);

export async function follow(context: RunnerContext, id: string, options: { intervalMs?: number } = {}): Promise<CampaignStatus> {
	const interval = options.intervalMs ?? 500;
	const tty = Boolean(process.stderr.isTTY);
	let status = await campaignStatus(context, id);
	const total = () => Object.values(status.counts).reduce((sum, n) => sum + n, 0);
	const done = () => total() - status.counts.pending - status.counts.claimed;
	const payload = () => ({
		sent: status.counts.sent,
		failed: status.counts.failed,
		unknown: status.counts.unknown,
		pending: status.counts.pending + status.counts.claimed,
		rate: status.rate.toFixed(1),
		etaText: eta(status.eta_seconds),
		state: status.state,
	});
	const bar = tty
		? new SingleBar({
				stream: process.stderr,
				format: ' {bar} {percentage}% | sent {sent} failed {failed} unknown {unknown} pending {pending} | {rate}/s | ETA {etaText} | {state}',
				hideCursor: true,
			})
		: undefined;
	bar?.start(total(), done(), payload());
	let lastLine = 0;
	while (!SETTLED.has(status.state)) {
		await new Promise((resolve) => setTimeout(resolve, interval));
		status = await campaignStatus(context, id);
		if (bar) bar.update(done(), payload());
		else if (Date.now() - lastLine > 2000) {
			const p = payload();
			process.stderr.write(`${id}: ${done()}/${total()} | sent ${p.sent} failed ${p.failed} unknown ${p.unknown} pending ${p.pending} | ${p.rate}/s | ETA ${p.etaText} | ${p.state}\n`);
			lastLine = Date.now();
		}
	}
	bar?.update(done(), payload());
	bar?.stop();
	return status;
}
