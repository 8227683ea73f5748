/**
 * Who replied to a campaign: per campaign one hash in its number's group (keys.replies), recipient
 * index -> epoch ms of the first reply, and `count`, the number of recipients that replied, moved
 * in the same script as the field it counts. Only the time is kept, never the reply's text
 * (docs/decisions/tracking/replies-endpoint-keeps-only-the-time.md). The hash lives as long as the
 * campaign's own (it takes the campaign hash's expiry, which only a draft has).
 */
import type { RunnerContext } from '../context';
import { redisScript } from '../redisScripts';

const COUNT = 'count';

/** Records that recipient `index` of the campaign replied at `atMs` (first reply kept); true if new. */
export async function recordReply(
	context: RunnerContext,
	campaign: { id: string; from: string },
	index: number,
	atMs: number,
): Promise<boolean> {
	const { redis, keys } = context;
	const run = redisScript(redis, 'recordReply');
	return (
		Number(
			await run(
				[keys.campaign(campaign.from, campaign.id), keys.replies(campaign.from, campaign.id)],
				[index, Math.round(atMs)],
			),
		) === 1
	);
}

/** How many recipients of the campaign replied. */
export async function repliedCount(context: RunnerContext, campaign: { id: string; from: string }): Promise<number> {
	return Number((await context.redis.hget(context.keys.replies(campaign.from, campaign.id), COUNT)) ?? 0);
}

/** When each recipient (by index) first replied, epoch ms, or undefined. */
export async function repliedAt(
	context: RunnerContext,
	campaign: { id: string; from: string },
	indexes: number[],
): Promise<(number | undefined)[]> {
	if (indexes.length === 0) return [];
	const values = await context.redis.hmget(context.keys.replies(campaign.from, campaign.id), ...indexes.map(String));
	return values.map((value) => (value === null ? undefined : Number(value)));
}
