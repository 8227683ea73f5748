/**
 * Reply attribution: an inbound message from phone P at time T (the service's `message_created`,
 * SPEC 6) is a reply to the campaign that last sent P a message within the reply period (RUNNER_REPLY_PERIOD) before T.
 * Nothing is written per send for this: the reply looks the sends up when it comes.
 *
 * Cost per reply, whatever the audiences (README, "Replies"): one ZREVRANGEBYSCORE of the campaigns
 * created since T - the reply period - CAMPAIGN_LIFE_MS (at most MAX_CANDIDATES), one SMEMBERS of the
 * number's running campaigns, one HMGET of their numbers, then one script per candidate campaign
 * of the number replied to (two HGETs inside: the phone index, then that recipient's ledger record).
 * No recipient list is read. A reply that finds a send to its phone in flight looks again until that
 * send is answered (docs/decisions/tracking/replies-wait-for-sends-in-flight.md).
 */
import { setTimeout as sleep } from 'node:timers/promises';

import { parsePhoneNumber } from 'convo-contract';

import type { RunnerContext } from '../context';
import { redisScript } from '../redisScripts';
import { recordReply } from './replies';
import { keywordIntent, keywordsOf } from '../audience/keywords';
import { applyKeyword, businessNumber } from '../audience/suppression';

/**
 * How long after its creation a campaign that no longer runs may still have sent (a large audience
 * at a low rate, a pause): older ones are not looked at unless they run now.
 */
const CAMPAIGN_LIFE_MS = 7 * 24 * 3_600_000;
/** The most campaigns one reply looks at (the newest): the bound of its cost. */
const MAX_CANDIDATES = 1000;
/** Scripts in flight at once for one reply. */
const PARALLEL = 50;
/** The service's clock and the runner's may differ: a reply stamped this much before the send still counts. */
const CLOCK_SKEW_MS = 60_000;
/** A send in flight is answered within RUNNER_HTTP_DEADLINE; its settle takes this much more at most. */
const SETTLE_SLACK_MS = 1000;
/** The first and the longest pause between two looks while a send to the phone is in flight. */
const FIRST_LOOK_MS = 25;
const LONGEST_LOOK_MS = 250;

interface Attribution {
	campaign: { id: string; from: string };
	index: number;
	sentAt: number;
}

/**
 * The campaign (and its recipient) that last messaged `phone` from `number` within the reply period
 * before `atMs`, if any; `inFlight` when a send to the phone claimed in that period has no answer yet.
 */
async function lookUpSends(
	context: RunnerContext,
	phone: string,
	number: string,
	atMs: number,
): Promise<{ found?: Attribution; inFlight: boolean }> {
	const { redis, keys, config } = context;
	const period = config.RUNNER_REPLY_PERIOD;
	const recent = await redis.zrevrangebyscore(
		keys.campaigns,
		atMs + CLOCK_SKEW_MS,
		atMs - period - CAMPAIGN_LIFE_MS,
		'LIMIT',
		0,
		MAX_CANDIDATES,
	);
	const ids = [...new Set([...recent, ...(await redis.smembers(keys.running(number)))])];
	if (ids.length === 0) return { inFlight: false };
	const homes = await redis.hmget(keys.homes, ...ids);
	const candidates = ids.filter((_, i) => homes[i] === number);
	const sentTo = redisScript(redis, 'sentTo');
	let best: Attribution | undefined;
	let inFlight = false;
	for (let start = 0; start < candidates.length; start += PARALLEL) {
		const batch = candidates.slice(start, start + PARALLEL);
		const answers = (await Promise.all(
			batch.map((id) => sentTo([keys.phones(number, id), keys.ledger(number, id)], [phone])),
		)) as Array<[string, string, 'claimed'?] | null>;
		answers.forEach((answer, i) => {
			if (!answer) return;
			const sentAt = Number(answer[1]);
			if (sentAt > atMs + CLOCK_SKEW_MS || sentAt < atMs - period) return;
			if (answer[2] === 'claimed') {
				inFlight = true;
				return;
			}
			// The latest send wins; of two in the same millisecond, the newer campaign (ids are time-ordered).
			if (!best || sentAt > best.sentAt || (sentAt === best.sentAt && batch[i] > best.campaign.id))
				best = { campaign: { id: batch[i], from: number }, index: Number(answer[0]), sentAt };
		});
	}
	return { found: best, inFlight };
}

/**
 * lookUpSends, again while a send to the phone is in flight: a reply can come before the send's answer
 * is settled (an automatic reply, a busy worker), and that send, once sent, is the one it answers.
 * Bounded by the send's deadline; a claim older than that (its process gone) is left to recovery.
 */
async function attributeReply(
	context: RunnerContext,
	phone: string,
	number: string,
	atMs: number,
): Promise<Attribution | undefined> {
	const giveUpAt = Date.now() + context.config.RUNNER_HTTP_DEADLINE + SETTLE_SLACK_MS;
	for (let pause = FIRST_LOOK_MS; ; pause = Math.min(pause * 2, LONGEST_LOOK_MS)) {
		const { found, inFlight } = await lookUpSends(context, phone, number, atMs);
		const left = giveUpAt - Date.now();
		if (!inFlight || left <= 0) return found;
		await sleep(Math.min(pause, left));
	}
}

/** The part of a message_created payload a reply needs (the route checks the whole body). */
export interface MessageCreated {
	from: string;
	to: string;
	status: 'received' | 'sent';
	createdAt: string;
	/** Read only to tell an opt-out or opt-in keyword (audience/keywords.ts); never logged or stored. */
	text?: unknown;
}

/**
 * `ignored`: our own send echoed back (status sent), or a sender or number that is no phone;
 * `unattributed`: no campaign messaged the phone within the reply period; `recorded`: the recipient's
 * first reply; `repeat`: that recipient had replied already.
 */
export type ReplyOutcome = 'ignored' | 'unattributed' | 'recorded' | 'repeat';

/**
 * One message_created delivery: a reply is attributed and recorded (its time only, never its text);
 * a reply that is an opt-out keyword puts its sender on the suppression list, an opt-in keyword
 * takes a keyword's entry off, before the reply is attributed: each only when it is the phone's
 * newest keyword message (applyKeyword) and was sent to one of the business's numbers.
 */
export async function receiveMessageCreated(context: RunnerContext, payload: MessageCreated): Promise<ReplyOutcome> {
	if (payload.status !== 'received') return 'ignored';
	const phone = parsePhoneNumber(payload.from);
	const number = parsePhoneNumber(payload.to);
	if (!phone.ok || !number.ok) return 'ignored';
	const atMs = Date.parse(payload.createdAt);
	const intent = keywordIntent(keywordsOf(context.config), payload.text);
	if (intent && !(await businessNumber(context, number.digits))) {
		// Neither number is logged: the event's `to` may be anyone's.
		context.log.warn(
			{ intent },
			"a keyword came in to a number that is not one of the business's (RUNNER_NUMBERS, " +
				'or a number with a campaign): the suppression list is unchanged',
		);
	} else if (intent) {
		const outcome = await applyKeyword(context, phone.digits, intent, atMs);
		context.log.info(
			{ intent, outcome },
			intent === 'opt_out' ? 'an opt-out keyword came in' : 'an opt-in keyword came in',
		);
	}
	const found = await attributeReply(context, phone.digits, number.digits, atMs);
	if (!found) return 'unattributed';
	const first = await recordReply(context, found.campaign, found.index, atMs);
	// Ids only: a phone number is not written to the log.
	context.log.debug({ campaign: found.campaign.id, index: found.index, first }, 'reply attributed');
	return first ? 'recorded' : 'repeat';
}
