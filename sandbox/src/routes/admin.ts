/**
 * The sandbox's own API under /__sandbox/ (no auth): fixture, reset, inspection of sent messages,
 * simulated inbound and dashboard messages, webhook registration and delivery log, faults, clock,
 * request counts, delivery settings with their drawn outcomes and the log of status checks, a
 * collection's search items as stored, and the sends the channel refuses (a template or number
 * paused, a business's messaging limit).
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod/v4';

import { parseOrThrow, toApiDigits } from 'convo-contract';
import type { SandboxContext } from '../context';
import { deliverySettingsInput, outcomeView, parseDeliverySettings } from '../delivery';
import { emitMessageCreated } from '../events';
import { faultInput } from '../faults';
import { describeFixture } from '../fixture';
import { badRequest, notFound } from '../httpError';
import type { Business, Message } from '../model';
import { statusAt } from '../messageStatus';

const messageInput = (peer: 'from' | 'to') =>
	z.strictObject({ business: z.string().min(1), [peer]: z.string().min(1), text: z.string().min(1).max(4096) });

const webhookInput = z.strictObject({
	business: z.string().min(1),
	url: z.url({ protocol: /^https?$/ }),
	method: z.enum(['POST', 'PUT']).default('POST'),
	headers: z.record(z.string(), z.string()).default({}),
});

const clockInput = z.strictObject({ advanceMs: z.int().min(0) });

const templateQualityInput = z.strictObject({ quality: z.enum(['active', 'paused', 'disabled']) });
const numberStateInput = z.strictObject({ state: z.enum(['active', 'restricted']) });
const dailyLimitInput = z.strictObject({ limit: z.int().min(1).nullable() });

const searchItemsQuery = z.object({ collection_id: z.string().min(1) });

/** The most messages one page of `GET /__sandbox/messages` holds (`limit`). */
const MESSAGES_PAGE_MAX = 100_000;

const messagesQuery = z.object({
	business: z.string().optional(),
	since: z.iso.datetime({ offset: true, error: 'must be an ISO 8601 time, e.g. 2026-01-31T12:00:00Z' }).optional(),
	from: z.string().optional(),
	// A page of a long log: a million sends do not fit one answer.
	offset: z.coerce.number().int().min(0).optional(),
	limit: z.coerce.number().int().min(1).max(MESSAGES_PAGE_MAX).optional(),
});

export function adminRoutes(app: FastifyInstance, context: SandboxContext): void {
	const { store, clock, webhooks, faults, requests, links, delivery, refusals } = context;
	const prefix = '/__sandbox';

	const knownBusiness = (id: unknown): Business => {
		const found = typeof id === 'string' ? store.businessById(id) : undefined;
		if (!found) throw notFound(`No business with id ${String(id)}`, 'business');
		return found;
	};
	const phoneDigitsOf = (value: string, field: string): string => {
		const digits = toApiDigits(value);
		if (!digits) throw badRequest(`${field} "${value}" is not a phone number with country code`, field);
		return digits;
	};
	const requestRecord = ({ receivedAtMs, ...wire }: NonNullable<Message['request']>) =>
		receivedAtMs === undefined ? wire : { ...wire, receivedAt: new Date(receivedAtMs).toISOString() };
	const messageRecord = (message: Message) => ({
		uuid: message.uuid,
		business: message.businessId,
		source: message.origin,
		direction: message.direction,
		to: message.to,
		from: message.from,
		type: message.type,
		text: message.text,
		content: message.content,
		status: statusAt(message, clock.now()),
		template: message.template,
		metadata: message.metadata,
		request: message.request && requestRecord(message.request),
		contactUuid: message.contactUuid,
		conversationId: message.conversationId,
		createdAt: new Date(message.createdAtMs).toISOString(),
	});

	app.get(`${prefix}/fixture`, async () => describeFixture(links.baseUrl, links.externalUrl));

	app.post(`${prefix}/reset`, async () => {
		// Clock first: the fixture's "recent" and "older than 24 h" are relative to service time.
		clock.reset();
		store.reset();
		webhooks.reset();
		faults.clear();
		refusals.reset();
		requests.reset();
		delivery.reset();
		return { reset: true };
	});

	// Requests each API endpoint received since start or reset (never their content).
	app.get(`${prefix}/requests`, async () => ({ counts: requests.toJSON() }));
	app.delete(`${prefix}/requests`, async () => {
		requests.reset();
		delivery.checks.reset();
		return { counts: requests.toJSON() };
	});

	// Every message the service accepted through the API: A2 sends and B8 template sends, in
	// arrival order; `since` (ISO time, inclusive) and `from` (sending number) narrow the list.
	app.get(`${prefix}/messages`, async (request) => {
		const query = parseOrThrow(messagesQuery, request.query, 'query');
		const only = query.business === undefined ? undefined : knownBusiness(query.business);
		const sinceMs = query.since === undefined ? undefined : Date.parse(query.since);
		const from = query.from === undefined ? undefined : phoneDigitsOf(query.from, 'from');
		let messages = store.acceptedMessages(only);
		if (sinceMs !== undefined || from !== undefined) {
			messages = messages.filter(
				(message) =>
					(sinceMs === undefined || message.createdAtMs >= sinceMs) && (from === undefined || message.from === from),
			);
		}
		if (query.offset !== undefined || query.limit !== undefined) {
			const first = query.offset ?? 0;
			messages = messages.slice(first, first + (query.limit ?? MESSAGES_PAGE_MAX));
		}
		return messages.map(messageRecord);
	});

	/** A message outside the API: a customer writing in, or an agent typing in the dashboard. */
	const storeConversationMessage = (body: unknown, direction: 'inbound' | 'outbound') => {
		const party = direction === 'inbound' ? 'from' : 'to';
		const input = parseOrThrow(messageInput(party), body, 'body') as { business: string; text: string } & Record<
			string,
			string
		>;
		const owner = knownBusiness(input.business);
		const digits = phoneDigitsOf(input[party], party);
		const contact = store.contactByDigits(owner, digits) ?? store.createContact(owner, digits);
		const [from, to] = direction === 'inbound' ? [digits, owner.phoneNumbers[0]] : [owner.phoneNumbers[0], digits];
		const message = store.addMessage({
			business: owner,
			contact,
			direction,
			origin: direction === 'inbound' ? 'inbound' : 'dashboard',
			from,
			to,
			text: input.text,
		});
		return { message, contact };
	};

	app.post(`${prefix}/inbound`, async (request) => {
		const { message, contact } = storeConversationMessage(request.body, 'inbound');
		emitMessageCreated(context, message, contact, 'received');
		return { message: messageRecord(message) };
	});

	// A message an agent sent by hand in the dashboard: stored as sent, never a webhook (SPEC 6).
	app.post(`${prefix}/dashboard-send`, async (request) => ({
		message: messageRecord(storeConversationMessage(request.body, 'outbound').message),
	}));

	app.post(`${prefix}/webhooks`, async (request, reply) => {
		const input = parseOrThrow(webhookInput, request.body, 'body');
		knownBusiness(input.business);
		const registration = webhooks.register(input);
		reply.code(201);
		return { id: registration.id, business: registration.business, url: registration.url, method: registration.method };
	});
	app.get(`${prefix}/webhooks`, async () => webhooks.list());
	app.delete(`${prefix}/webhooks/:id`, async (request) => {
		const { id } = request.params as { id: string };
		if (!webhooks.remove(id)) throw notFound(`No webhook with id ${id}`, 'id');
		return { deleted: id };
	});
	app.get(`${prefix}/webhooks/deliveries`, async (request) => {
		const query = request.query as Record<string, unknown>;
		return webhooks
			.deliveries()
			.filter((attempt) => query.business === undefined || attempt.business === query.business);
	});

	// A collection's items as stored (B2 lists ids and states only): what a client upserted, read
	// without an upsert of its own that would change what it reads.
	app.get(`${prefix}/search-items`, async (request) => {
		const { collection_id } = parseOrThrow(searchItemsQuery, request.query, 'query');
		if (!store.collections.has(collection_id))
			throw notFound(`No collection with id ${collection_id}`, 'collection_id');
		return Array.from(store.items.get(collection_id)?.values() ?? [], (item) => ({
			external_id: item.external_id,
			payload: item.payload,
			embedding_json: item.embedding_json,
			is_active: item.is_active,
		}));
	});

	app.get(`${prefix}/faults`, async () => faults.list());
	app.post(`${prefix}/faults`, async (request) => {
		faults.set(parseOrThrow(faultInput, request.body, 'body'));
		return faults.list();
	});
	app.delete(`${prefix}/faults`, async (request) => {
		const query = request.query as Record<string, unknown>;
		faults.clear(typeof query.endpoint === 'string' ? query.endpoint : undefined);
		return faults.list();
	});

	// What the channel refuses a template send for: a template's quality, a number's state, a
	// business's messaging limit (distinct customers in 24 hours; null: unlimited).
	app.get(`${prefix}/refusals`, async () => refusals.view());
	app.put(`${prefix}/templates/:id/quality`, async (request) => {
		const { id } = request.params as { id: string };
		if (!store.templates.has(id)) throw notFound(`No template with id ${id}`, 'id');
		const { quality } = parseOrThrow(templateQualityInput, request.body, 'body');
		refusals.setTemplate(id, quality);
		return refusals.view();
	});
	app.put(`${prefix}/numbers/:phone/state`, async (request) => {
		const digits = phoneDigitsOf((request.params as { phone: string }).phone, 'phone');
		if (!store.businesses.some((business) => business.phoneNumbers.includes(digits)))
			throw notFound(`No business sends from ${digits}`, 'phone');
		const { state } = parseOrThrow(numberStateInput, request.body, 'body');
		refusals.setNumber(digits, state);
		return refusals.view();
	});
	app.put(`${prefix}/businesses/:id/daily-limit`, async (request) => {
		const business = knownBusiness((request.params as { id: string }).id);
		const { limit } = parseOrThrow(dailyLimitInput, request.body, 'body');
		refusals.setDailyLimit(business.id, limit);
		return refusals.view();
	});

	app.get(`${prefix}/clock`, async () => ({ now: clock.iso(), offsetMs: clock.offset }));
	app.post(`${prefix}/clock`, async (request) => {
		const { advanceMs } = parseOrThrow(clockInput, request.body, 'body');
		clock.advance(advanceMs);
		delivery.clockMoved();
		return { now: clock.iso(), offsetMs: clock.offset };
	});

	// Delivery outcomes drawn per message from settings (delivery.ts); without them, the default timeline.
	app.get(`${prefix}/delivery`, async () => ({ settings: delivery.settings ?? null }));
	app.post(`${prefix}/delivery`, async (request) => {
		const settings = parseDeliverySettings(parseOrThrow(deliverySettingsInput, request.body, 'body'), store.timeline);
		delivery.set(settings);
		return { settings };
	});
	app.delete(`${prefix}/delivery`, async () => {
		delivery.clear();
		return { settings: null };
	});
	app.get(`${prefix}/delivery/outcomes`, async () => store.acceptedMessages().map(outcomeView));
	app.get(`${prefix}/delivery/checks`, async () => delivery.checks.toJSON());
}
