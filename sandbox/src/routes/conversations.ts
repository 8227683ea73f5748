/** Conversation lookup (SPEC B7): every filter given must match; none 404, several 409. */
import type { FastifyInstance } from 'fastify';

import { LIMITS } from 'convo-contract';
import type { SandboxContext } from '../context';
import { badRequest, HttpError, notFound } from '../httpError';
import { conversationMessageView } from '../views';
import { splitName } from './contacts';
import { defineOperation } from './operation';

export function conversationRoutes(app: FastifyInstance, context: SandboxContext): void {
	const { store, clock } = context;

	defineOperation(app, context, 'getConversation', (business, { query }) => {
		if (query.field_key !== undefined && !business.fieldKeys.includes(query.field_key)) {
			throw badRequest(
				`field_key "${query.field_key}" is not a contact field of this business (known: ` +
					`${business.fieldKeys.join(', ')})`,
				'field_key',
			);
		}
		// By phone the index gives the one candidate; a field lookup alone reads the business's contacts.
		const byPhone = query.phone === undefined ? undefined : store.contactByDigits(business, query.phone);
		const candidates = query.phone === undefined ? store.contactsOf(business) : byPhone ? [byPhone] : [];
		const matches = candidates.filter((contact) => {
			if (query.field_key !== undefined) {
				const value = contact.customFields[query.field_key];
				if (value === undefined || value === null || String(value) !== query.field_value) return false;
			}
			return true;
		});
		if (matches.length === 0) throw notFound('No contact matches the lookup');
		if (matches.length > 1)
			throw new HttpError(409, `${matches.length} contacts match the lookup; add another filter so that one matches`);
		const contact = matches[0];
		const conversations = store.conversationsOf(contact);
		if (conversations.length === 0) throw notFound('The contact has no conversation');
		if (conversations.length > 1) throw new HttpError(409, `The contact has ${conversations.length} conversations`);
		const conversation = conversations[0];
		const all = store.messagesOf(contact).filter((message) => message.conversationId === conversation.id);
		const limit = query.message_limit ?? LIMITS.conversationMessageLimit.default;
		const now = clock.now();
		const last = all.at(-1);
		return {
			contact: { id: contact.uuid, ...splitName(contact.name), phone_number: contact.phoneNumber.slice(1) },
			conversation: {
				id: conversation.id,
				platform: conversation.platform,
				created_at: conversation.createdAt,
				last_message_at: last ? new Date(last.createdAtMs).toISOString() : conversation.createdAt,
				message_count: all.length,
				// Not in SPEC 2.4; shown so the tag sync of B3 can be observed.
				tags: [...conversation.tags],
				// The most recent `limit` messages, oldest first (the shape SPEC 2.4 shows).
				messages: all.slice(-limit).map((message) => conversationMessageView(message, now)),
			},
		};
	});
}
