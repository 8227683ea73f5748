/**
 * One frequency cap across campaigns: "at most 1 campaign message per 24 h, 3 per 7 days" to
 * a phone, whichever campaign, scheduled or not, sends it. The policy is the sending number's own (`cap
 * set`), else the business default (RUNNER_FREQUENCY_CAP), else none. It is enforced per sending
 * number (docs/decisions/audience/frequency-cap-per-sending-number.md): the claim's script runs
 * on the number's Cluster slot, so the phone's send times live in the number's group.
 *
 * The rule lives in Lua, once (lua/includes/cap.lua): the start gate's claim (lua/includes/jobClaim.lua openInJob and
 * claimAt) asks capVerdict before it claims a pending recipient, and records the claim's time on the phone
 * with capCount in the same step, so two processes cannot both see room for one phone. A recipient
 * over the cap is written `capped` with the time it would next be allowed, or, in a campaign that
 * waits (`when_capped` wait), stays pending in the campaign's waiting set until then, and the
 * feeder feeds it again when due (feedWaiting) without reading the ledger. A claim settled as
 * provably not sent (back to pending, failed, not_sent) gives its count back (capGiveBack).
 *
 * Per phone: a string key of the last N claim times (ms on Redis's clock, N the policy's largest
 * count), expiring after the longest rule's period: bounded, and gone once it no longer matters.
 */
import type { RunnerConfig } from '../config';
import type { Keys } from '../keys';
import { NO_CAP, parseCapPolicy } from '../capRules';
import { encodeCapPolicy, shownPolicy } from './capPolicy';
import type { RedisConnection } from '../redis';
import { redisScript } from '../redisScripts';

/** What the cap's functions use of a RunnerContext: its Redis, its keys and its settings. */
interface CapContext {
	redis: RedisConnection;
	keys: Keys;
	config: RunnerConfig;
}

/** The business default as the scripts read it ('' for none), parsed once per process. */
const defaults = new WeakMap<RunnerConfig, string>();
export function defaultCapPolicy(config: RunnerConfig): string {
	const known = defaults.get(config);
	if (known !== undefined) return known;
	const text = config.RUNNER_FREQUENCY_CAP;
	const encoded = text === undefined ? '' : encodeCapPolicy(parseCapPolicy(text, 'RUNNER_FREQUENCY_CAP'));
	defaults.set(config, encoded);
	return encoded;
}

/** The cap's keys for a campaign's scripts, in the order they take them: policy, per-phone prefix, waiting set. */
export const capKeys = (keys: Keys, from: string, campaign: string) => [
	keys.capPolicy(from),
	keys.capSends(from),
	keys.capWaiting(from, campaign),
];

export interface CapView {
	from: string;
	/** What holds for the number: its own policy, else the default, else none. */
	policy: string;
	source: 'number' | 'default' | 'none';
	/** The number's own (null: none set) and the business default (null: none). */
	number_policy: string | null;
	default_policy: string | null;
}

export async function showCap(context: CapContext, from: string): Promise<CapView> {
	const own = await context.redis.get(context.keys.capPolicy(from));
	const fallback = defaultCapPolicy(context.config);
	const number_policy = own === null ? null : shownPolicy(own);
	const default_policy = fallback === '' ? null : shownPolicy(fallback);
	const source = number_policy !== null ? 'number' : default_policy !== null ? 'default' : 'none';
	return { from, policy: number_policy ?? default_policy ?? NO_CAP, source, number_policy, default_policy };
}

/** Sets the number's own policy (`none`: no cap for it, whatever the default); applies from the next claim. */
export async function setCap(context: CapContext, from: string, policy: string, setting: string): Promise<CapView> {
	await context.redis.set(context.keys.capPolicy(from), encodeCapPolicy(parseCapPolicy(policy, setting)));
	return showCap(context, from);
}

/** Removes the number's own policy: the default holds again. */
export async function clearCap(context: CapContext, from: string): Promise<CapView> {
	await context.redis.del(context.keys.capPolicy(from));
	return showCap(context, from);
}

/** For a dry run of a campaign from `from`: the rule that would cap each phone now ('' for none). */
export async function wouldCap(context: CapContext, from: string, phones: string[]): Promise<string[]> {
	if (phones.length === 0) return [];
	const check = redisScript(context.redis, 'wouldCap');
	return (await check(
		[context.keys.capPolicy(from), context.keys.capSends(from)],
		[defaultCapPolicy(context.config), ...phones],
	)) as string[];
}

/**
 * A marketing test send from `from` to `phone` (digits) takes its place under the cap as a
 * recipient's send does: `held` names the rule and when the phone is next allowed; otherwise
 * `countedAt` is the claim's time (to give back when the send provably did not go), or undefined
 * when no cap applies. `look` (a dry run) answers the same and counts nothing.
 */
export async function claimTestSend(
	context: CapContext,
	from: string,
	phone: string,
	mode: 'claim' | 'look' = 'claim',
): Promise<{ held: { rule: string; nextAllowed: string } } | { countedAt?: number }> {
	const claim = redisScript(context.redis, 'capTestClaim');
	const [at, rule, nextAllowed] = (await claim(
		[context.keys.capPolicy(from), context.keys.capSends(from)],
		[defaultCapPolicy(context.config), phone, mode === 'look' ? 'look' : ''],
	)) as [number, string?, string?];
	if (Number(at) < 0) return { held: { rule: rule as string, nextAllowed: nextAllowed as string } };
	return Number(at) > 0 ? { countedAt: Number(at) } : {};
}

export async function giveBackTestSend(
	context: CapContext,
	from: string,
	phone: string,
	countedAt: number,
): Promise<void> {
	const giveBack = redisScript(context.redis, 'capTestGiveBack');
	await giveBack([context.keys.capSends(from)], [phone, countedAt]);
}
