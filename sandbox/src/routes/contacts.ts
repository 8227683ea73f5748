/** Contacts (SPEC B3 to B6). Another business's contact is 404, as if it did not exist. */
import type { FastifyInstance } from 'fastify';

import { LIMITS } from 'convo-contract';
import type { SandboxContext } from '../context';
import { badRequest, notFound } from '../httpError';
import type { Business, Contact } from '../model';
import { contactEnvelopeView, contactMessageView } from '../views';
import { defineOperation } from './operation';

function findContact(context: SandboxContext, business: Business, uuid: string): Contact {
	const contact = context.store.contacts.get(uuid);
	if (!contact || contact.businessId !== business.id) throw notFound(`No contact with uuid ${uuid}`, 'uuid');
	return contact;
}

export function contactRoutes(app: FastifyInstance, context: SandboxContext): void {
	const { store, clock, links } = context;

	defineOperation(app, context, 'updateContact', (business, { params, body }) => {
		const contact = findContact(context, business, params.uuid);
		if (body.assigned_user !== undefined && !business.users.includes(body.assigned_user)) {
			throw badRequest(`assigned_user ${body.assigned_user} is not a user of this business`, 'assigned_user');
		}
		if (body.name !== undefined) {
			const name = body.name.trim().replace(/\s+/g, ' ');
			if (name === '') throw badRequest('name must not be blank', 'name');
			contact.name = name;
		}
		if (body.tags !== undefined) {
			// Full replacement, duplicates removed, synced to every conversation of the contact.
			contact.tags = [...new Set(body.tags)];
			for (const conversation of store.conversationsOf(contact)) conversation.tags = [...contact.tags];
		}
		if (body.custom_fields !== undefined)
			contact.customFields = { ...contact.customFields, ...structuredClone(body.custom_fields) };
		if (body.assigned_user !== undefined) contact.assignedUser = body.assigned_user;
		if (body.unassign_user === true) contact.assignedUser = null;
		return contactEnvelopeView(store, contact, links);
	});

	defineOperation(app, context, 'getContactMessages', (business, { params, query }) => {
		const contact = findContact(context, business, params.uuid);
		const limit = query.limit ?? LIMITS.contactMessagesLimit.default;
		const now = clock.now();
		const messages = store
			.messagesOf(contact)
			.slice(-limit)
			.reverse()
			.map((message) => contactMessageView(message, now));
		return { messages };
	});

	const setConversationsClosed = (business: Business, uuid: string, close: boolean) => {
		const contact = findContact(context, business, uuid);
		const at = clock.iso();
		for (const conversation of store.conversationsOf(contact)) {
			// Closing a closed conversation keeps its closing time.
			conversation.closedAt = close ? (conversation.closedAt ?? at) : null;
		}
		if (close && store.conversationsOf(contact).length === 0) {
			store.currentConversation(contact).closedAt = at;
		}
		return contactEnvelopeView(store, contact, links);
	};

	defineOperation(app, context, 'closeContactConversations', (business, { params }) =>
		setConversationsClosed(business, params.uuid, true),
	);
	defineOperation(app, context, 'openContactConversations', (business, { params }) =>
		setConversationsClosed(business, params.uuid, false),
	);
}

/** First and last name from a full name: the first word, then the rest (SPEC B3). */
export function splitName(name: string): { first_name: string; last_name: string } {
	const [first = '', ...rest] = name.trim().split(/\s+/);
	return { first_name: first, last_name: rest.join(' ') };
}
