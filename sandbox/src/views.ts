/** How records look in responses and webhook payloads (SPEC section 2 and 6). */
import type { AgentRecord, Contact, Message } from './model';
import { contactMessageStatus, conversationStatus, failureReason, statusAt } from './messageStatus';
import type { Store } from './store';

export interface Links {
	dashboardUrl: string;
}

function closedAt(store: Store, contact: Contact): string | null {
	const conversations = store.conversationsOf(contact);
	if (conversations.length === 0) return null;
	// Open when any conversation is open; otherwise the latest closing time.
	if (conversations.some((conversation) => conversation.closedAt === null)) return null;
	return (
		conversations
			.map((conversation) => conversation.closedAt as string)
			.sort()
			.at(-1) ?? null
	);
}

function conversationHref(store: Store, contact: Contact, links: Links): string {
	const conversation = store.conversationsOf(contact).at(-1);
	return `${links.dashboardUrl}/conversations/${conversation ? conversation.id : contact.uuid}`;
}

/** The contact as the webhook payload shows it (SPEC 6). */
export function eventContactView(store: Store, contact: Contact, links: Links) {
	return {
		href: `${links.dashboardUrl}/contacts/${contact.uuid}`,
		conversationHref: conversationHref(store, contact, links),
		name: contact.name,
		tags: [...contact.tags],
		uuid: contact.uuid,
		source: contact.source,
		avatarUrl: contact.avatarUrl,
		createdAt: contact.createdAt,
		phoneNumber: contact.phoneNumber,
	};
}

/** The contact as contact-management responses show it (SPEC 2.3). */
function contactView(store: Store, contact: Contact, links: Links) {
	return {
		...eventContactView(store, contact, links),
		closedAt: closedAt(store, contact),
		assignedUser: contact.assignedUser,
		customFields: structuredClone(contact.customFields),
	};
}

export function contactEnvelopeView(store: Store, contact: Contact, links: Links) {
	return { contact: [contactView(store, contact, links)] };
}

export function contactMessageView(message: Message, nowMs: number) {
	return {
		uuid: message.uuid,
		status: contactMessageStatus(statusAt(message, nowMs)),
		channel: 'whatsapp',
		createdAt: new Date(message.createdAtMs).toISOString(),
		from: message.from,
		to: message.to,
		text: message.text,
		attachments: [...message.attachments],
		metadata: { ...message.metadata },
	};
}

export function conversationMessageView(message: Message, nowMs: number) {
	return {
		id: message.uuid,
		text: message.text,
		direction: message.direction,
		status: conversationStatus(statusAt(message, nowMs)),
		error: failureReason(message, nowMs),
		created_at: new Date(message.createdAtMs).toISOString(),
	};
}

export function messageStatusView(message: Message, nowMs: number) {
	const status = statusAt(message, nowMs);
	return {
		message: {
			uuid: message.uuid,
			status,
			messageStatusPayload: {
				id: message.statusRecordId,
				type: status,
				payload: { type: message.template ? 'template' : 'session', whatsappMessageId: message.whatsappMessageId },
				destination: message.to,
			},
		},
	};
}

/** Descriptions the service generates for known tools; shown on read, ignored on save (SPEC B9). */
const TOOL_DESCRIPTIONS: Record<string, string> = {
	handoff_to_human_control: 'Hands the conversation over to a human agent and stops the bot.',
};

function toolsWithDescriptions(tools: unknown): Record<string, unknown> {
	const out: Record<string, unknown> = {};
	for (const [name, value] of Object.entries((tools ?? {}) as Record<string, unknown>)) {
		out[name] =
			value && typeof value === 'object' && !Array.isArray(value)
				? {
						...(value as Record<string, unknown>),
						description: TOOL_DESCRIPTIONS[name] ?? `Generated description of the ${name} tool.`,
					}
				: value;
	}
	return out;
}

/** The full agent (B10, B11). */
export function agentView(agent: AgentRecord) {
	const fields = structuredClone(agent.fields);
	return {
		agent: { id: agent.id, ...fields, tools: toolsWithDescriptions(fields.tools) },
		business_id: agent.businessId,
	};
}

/** What B9 answers: `{ agent: { id, name, type, system_prompt, tools }, business_id }`. */
export function createdAgentView(agent: AgentRecord) {
	const { name, type, system_prompt, tools } = agent.fields;
	return {
		agent: { id: agent.id, name, type, system_prompt, tools: toolsWithDescriptions(tools) },
		business_id: agent.businessId,
	};
}
