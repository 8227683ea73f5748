/**
 * Delivery settings (`POST /__sandbox/delivery`): each A2 and B8 send gets a plan drawn from
 * them, deterministically from hash(seed, recipient digits), so the same audience and seed give
 * the same outcomes whatever the send order. Replies become inbound messages at their time and
 * are delivered as message_created. Also the log of A1 and B7 requests per message and phone,
 * so tests can prove how often a client checked (`GET /__sandbox/delivery/checks`).
 */
import { createHash } from 'node:crypto';

import { z } from 'zod/v4';

import { toApiDigits } from 'convo-contract';
import type { Clock } from './clock';
import { emitMessageCreated, type EmittingContext } from './events';
import { badRequest } from './httpError';
import type { DeliveryPlan, Message, Timeline } from './model';
import { endpointOf } from './endpoints';
import { MAX_STEP_MS, planOf } from './messageStatus';
import type { Store } from './store';

const share = z.number().min(0).max(1);
const delay = z.int().min(0).max(MAX_STEP_MS);

export const deliverySettingsInput = z.strictObject({
	seed: z.union([z.string().min(1).max(200), z.number()], {
		error: (issue) =>
			issue.input === undefined ? 'is required' : 'must be a string (1 to 200 characters) or a number',
	}),
	delivered: share,
	read: share,
	failed: z
		.array(z.strictObject({ share, reason: z.string().min(1).max(1000) }))
		.max(20)
		.default([]),
	replied: share.default(0),
	reply_texts: z.array(z.string().min(1).max(4096)).min(1).max(100).optional(),
	delays_ms: z
		.strictObject({ sent: delay, delivered: delay, read: delay, failed: delay, reply: delay })
		.partial()
		.default({}),
	/**
	 * Shares of a template's sends by its id, in place of the ones above (an A/B test whose variants
	 * read differently); failures, replies' texts and delays stay the settings'.
	 */
	templates: z
		.record(z.string().min(1).max(100), z.strictObject({ delivered: share, read: share, replied: share.optional() }))
		.optional(),
});

/** A reply comes this long after read unless the settings say when. */
const REPLY_AFTER_READ_MS = 5000;
const DEFAULT_REPLY_TEXTS = ['Thanks!'];
/** Shares add up in floating point (0.9 + 0.03 + 0.07): a tiny excess is still "at most 1". */
const EPSILON = 1e-9;

interface DeliverySettings {
	seed: string | number;
	delivered: number;
	read: number;
	failed: { share: number; reason: string }[];
	replied: number;
	reply_texts: string[];
	delays_ms: { sent: number; delivered: number; read: number; failed: number; reply: number };
	templates?: Record<string, { delivered: number; read: number; replied?: number }>;
}

/**
 * The settings with every default filled in (step times: the sandbox's default timeline, and a reply
 * 5 s after read), or a 400 naming the field and the rule it breaks.
 */
export function parseDeliverySettings(
	input: z.output<typeof deliverySettingsInput>,
	timeline: Readonly<Timeline>,
): DeliverySettings {
	const settings: DeliverySettings = {
		...input,
		reply_texts: input.reply_texts ?? DEFAULT_REPLY_TEXTS,
		delays_ms: { ...timeline, reply: timeline.read + REPLY_AFTER_READ_MS, ...input.delays_ms },
	};
	for (const [id, shares] of Object.entries(settings.templates ?? {}))
		if (shares.read > shares.delivered + EPSILON || (shares.replied ?? 0) > shares.delivered + EPSILON)
			throw badRequest(
				`templates.${id}: read and replied must each be at most delivered (${shares.delivered})`,
				`templates.${id}`,
			);
	if (settings.read > settings.delivered + EPSILON) {
		throw badRequest(
			`read (${settings.read}) must be at most delivered (${settings.delivered}): ` +
				'read messages are a subset of the delivered ones',
			'read',
		);
	}
	if (settings.replied > settings.delivered + EPSILON) {
		throw badRequest(
			`replied (${settings.replied}) must be at most delivered (${settings.delivered}): ` +
				'only delivered messages get replies',
			'replied',
		);
	}
	const failedShare = settings.failed.reduce((sum, entry) => sum + entry.share, 0);
	if (settings.delivered + failedShare > 1 + EPSILON) {
		throw badRequest(
			`delivered (${settings.delivered}) plus the failed shares (${round(failedShare)}) ` +
				`is ${round(settings.delivered + failedShare)}; at most 1 (the rest stays sent)`,
			'failed',
		);
	}
	const delays = settings.delays_ms;
	const given = (name: keyof typeof delays) =>
		`delays_ms.${name} (${delays[name]}${input.delays_ms[name] === undefined ? ', the default' : ''})`;
	for (const [later, earlier] of [
		['delivered', 'sent'],
		['read', 'delivered'],
		['failed', 'sent'],
		['reply', 'delivered'],
	] as const) {
		if (delays[later] < delays[earlier])
			throw badRequest(
				`${given(later)} must be at least ${given(earlier)}: a step cannot come before the one it follows`,
				`delays_ms.${later}`,
			);
	}
	return settings;
}

const round = (value: number) => Math.round(value * 1e6) / 1e6;

/** A uniform number in [0, 1) from the seed, the phone digits and what it decides. */
function unitHash(seed: string | number, digits: string, purpose: string): number {
	const hash = createHash('sha256')
		.update(`${String(seed)}\n${digits}\n${purpose}`)
		.digest();
	return hash.readUIntBE(0, 6) / 2 ** 48;
}

/**
 * The draw rule (docs/decisions/sandbox/draw-rule.md): one number u in [0, 1) per phone, cut into
 * consecutive ranges: each failure reason by its share, then read, then delivered but not read
 * (together `delivered`), the rest stays sent. Replies are the first `replied` of the delivered
 * range, so read messages reply first. Step times count from the send.
 */
function drawPlan(settings: DeliverySettings, digits: string, sentAtMs: number): DeliveryPlan {
	const delays = settings.delays_ms;
	const u = unitHash(settings.seed, digits, 'outcome');
	let edge = 0;
	for (const failure of settings.failed) {
		edge += failure.share;
		if (u < edge)
			return {
				outcome: 'failed',
				reason: failure.reason,
				sentAtMs: sentAtMs + delays.sent,
				failedAtMs: sentAtMs + delays.failed,
			};
	}
	const plan: DeliveryPlan = { outcome: 'sent', sentAtMs: sentAtMs + delays.sent };
	if (u >= edge + settings.delivered) return plan;
	plan.outcome = u < edge + settings.read ? 'read' : 'delivered';
	plan.deliveredAtMs = sentAtMs + delays.delivered;
	if (plan.outcome === 'read') plan.readAtMs = sentAtMs + delays.read;
	if (u < edge + settings.replied) {
		const texts = settings.reply_texts;
		plan.repliedAtMs = sentAtMs + delays.reply;
		plan.replyText = texts[Math.floor(unitHash(settings.seed, digits, 'reply') * texts.length)];
	}
	return plan;
}

/** The outcome of one message as `GET /__sandbox/delivery/outcomes` lists it. */
export function outcomeView(message: Message) {
	const plan = planOf(message);
	const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
	return {
		message_id: message.uuid,
		to: message.to,
		outcome: plan.outcome,
		reason: plan.reason,
		sent_at: iso(plan.sentAtMs),
		delivered_at: iso(plan.deliveredAtMs),
		read_at: iso(plan.readAtMs),
		failed_at: iso(plan.failedAtMs),
		replied_at: iso(plan.repliedAtMs),
		reply_text: plan.replyText,
	};
}

/** Service times of every A1 request per message and every B7 request per phone. */
class DeliveryChecks {
	private readonly statusEndpoint = endpointOf('getMessageStatus');
	private readonly conversationEndpoint = endpointOf('getConversation');
	private status = new Map<string, string[]>();
	private conversations = new Map<string, string[]>();

	/** Every request received counts, refused ones included, as the request counts do. */
	record(endpoint: string | undefined, params: unknown, query: unknown, atMs: number): void {
		if (endpoint === this.statusEndpoint) {
			const uuid = (params as Record<string, unknown> | undefined)?.uuid;
			if (typeof uuid === 'string') push(this.status, uuid, atMs);
		} else if (endpoint === this.conversationEndpoint) {
			// Lookups by a contact field alone name no phone and are not logged here.
			const phone = (query as Record<string, unknown> | undefined)?.phone;
			if (typeof phone === 'string' && phone !== '') push(this.conversations, toApiDigits(phone) ?? phone, atMs);
		}
	}

	reset(): void {
		this.status.clear();
		this.conversations.clear();
	}

	toJSON() {
		return { status: Object.fromEntries(this.status), conversations: Object.fromEntries(this.conversations) };
	}
}

function push(map: Map<string, string[]>, key: string, atMs: number): void {
	const list = map.get(key);
	const at = new Date(atMs).toISOString();
	if (list) list.push(at);
	else map.set(key, [at]);
}

/** setTimeout's longest wait; a later reply re-arms when it fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

type ReplyContext = EmittingContext & { clock: Clock };

export class Delivery {
	private current: DeliverySettings | undefined;
	readonly checks = new DeliveryChecks();
	/** Replies still to come, earliest first. */
	private pending: { atMs: number; uuid: string }[] = [];
	private timer: NodeJS.Timeout | undefined;
	private readonly store: Store;
	private readonly clock: Clock;

	constructor(private readonly context: ReplyContext) {
		this.store = context.store;
		this.clock = context.clock;
	}

	get settings(): DeliverySettings | undefined {
		return this.current;
	}

	set(settings: DeliverySettings): void {
		this.current = settings;
	}

	/** Back to the default timeline for messages sent from now on; plans already drawn stay. */
	clear(): void {
		this.current = undefined;
	}

	/** Draws the plan of an accepted A2 or B8 send (no settings: the default timeline). */
	assign(message: Message): void {
		if (!this.current) return;
		const shares = message.template && this.current.templates?.[message.template.id];
		const settings = shares ? { ...this.current, ...shares, replied: shares.replied ?? 0 } : this.current;
		message.delivery = drawPlan(settings, message.to, message.createdAtMs);
		if (message.delivery.repliedAtMs !== undefined) this.schedule(message.delivery.repliedAtMs, message.uuid);
	}

	/**
	 * Creates every reply due by service time. Called on each request (so an answer never misses a
	 * reply already due), after the clock moved, and by the timer for the next reply.
	 */
	flushDue(): void {
		const now = this.clock.now();
		let due = 0;
		while (due < this.pending.length && this.pending[due].atMs <= now) due++;
		if (due > 0) for (const { uuid } of this.pending.splice(0, due)) this.reply(uuid);
		if (due > 0 || !this.timer) this.arm();
	}

	/** The clock moved: replies now due come at once and the timer waits for the next one anew. */
	clockMoved(): void {
		this.stop();
		this.flushDue();
	}

	/** Settings, pending replies and the checks log gone (POST /__sandbox/reset). */
	reset(): void {
		this.stop();
		this.current = undefined;
		this.pending = [];
		this.checks.reset();
	}

	/** No timer left running (close). */
	stop(): void {
		clearTimeout(this.timer);
		this.timer = undefined;
	}

	private schedule(atMs: number, uuid: string): void {
		// Sends arrive in order with one reply delay: almost always an append.
		let index = this.pending.length;
		while (index > 0 && this.pending[index - 1].atMs > atMs) index--;
		this.pending.splice(index, 0, { atMs, uuid });
		if (index === 0) {
			this.stop();
			this.arm();
		}
	}

	private arm(): void {
		const next = this.pending[0];
		if (!next || this.timer) return;
		const wait = Math.min(Math.max(0, next.atMs - this.clock.now()), MAX_TIMER_MS);
		this.timer = setTimeout(() => {
			this.timer = undefined;
			this.flushDue();
		}, wait);
		// A pending reply never keeps the process (or a test run) alive.
		this.timer.unref();
	}

	/** The recipient answers: an inbound message at the planned time, as /__sandbox/inbound makes one. */
	private reply(uuid: string): void {
		const message = this.store.messages.get(uuid);
		const plan = message?.delivery;
		const contact = message && this.store.contacts.get(message.contactUuid);
		const business = message && this.store.businessById(message.businessId);
		if (!plan || plan.repliedAtMs === undefined || !contact || !business) return;
		const reply = this.store.addMessage({
			business,
			contact,
			direction: 'inbound',
			origin: 'inbound',
			from: message.to,
			to: message.from,
			text: plan.replyText ?? '',
			atMs: plan.repliedAtMs,
		});
		emitMessageCreated(this.context, reply, contact, 'received');
	}
}
