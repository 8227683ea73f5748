/** The records the sandbox keeps in memory. Field names follow SPEC section 2 where it names them. */

export interface Business {
	id: string;
	name: string;
	accessToken: string;
	apiKey: string;
	channelUuid: string;
	phoneNumbers: string[];
	users: string[];
	teams: string[];
	fieldKeys: string[];
}

export type TemplateKind = 'positional' | 'named' | 'urlButton';

interface TemplateButton {
	index: number;
	sub_type: 'url';
	url: string;
}

export interface Template {
	id: string;
	businessId: string;
	name: string;
	kind: TemplateKind;
	/** Body text with `{{1}}` or `{{name}}` placeholders. */
	body: string;
	variables: string[];
	buttons: TemplateButton[];
}

export interface Collection {
	id: string;
	businessId: string;
	name: string;
	embedding_fields: string[];
}

export interface SearchItem {
	id: string;
	collection_id: string;
	external_id: string;
	payload: Record<string, unknown>;
	embedding_json: Record<string, unknown>;
	is_active: boolean;
	created_at: string;
	updated_at: string;
}

export interface Contact {
	uuid: string;
	businessId: string;
	name: string;
	/** "+" and digits. */
	phoneNumber: string;
	avatarUrl: string | null;
	createdAt: string;
	source: string;
	tags: string[];
	assignedUser: string | null;
	customFields: Record<string, unknown>;
	/** Sends to this contact end in status failed. */
	undeliverable: boolean;
}

export interface Conversation {
	id: string;
	businessId: string;
	contactUuid: string;
	platform: string;
	createdAt: string;
	closedAt: string | null;
	tags: string[];
	/** The agent assigned by a template send (B8 agent_id). */
	agentId: string | null;
	assignedUser: string | null;
	teamUuid: string | null;
}

/** Where a message came from: decides its status progression, webhooks and the admin log. */
export type MessageOrigin = 'api' | 'template' | 'inbound' | 'dashboard' | 'fixture';

export interface Message {
	uuid: string;
	businessId: string;
	contactUuid: string;
	conversationId: string;
	direction: 'inbound' | 'outbound';
	origin: MessageOrigin;
	/** Digits, no "+". */
	from: string;
	/** Digits, no "+". */
	to: string;
	type: string;
	text: string;
	content: Record<string, unknown>;
	attachments: unknown[];
	metadata: Record<string, unknown>;
	/** Service time in ms. */
	createdAtMs: number;
	template?: { id: string; name: string; variables: Record<string, string>; buttons: { index: number; url: string }[] };
	/** The send request as the service received it (after contract parsing): shows tests what the client sent. */
	/** What the API call carried, and when it arrived (before any injected latency): the admin log's view of the wire. */
	request?: { query: Record<string, unknown>; body: Record<string, unknown>; receivedAtMs?: number };
	statusRecordId: string;
	whatsappMessageId: string;
	undeliverable: boolean;
	/** The default timeline of its sandbox (messageStatus.ts), which it follows unless `delivery` is set. */
	timeline: Readonly<Timeline>;
	/** Drawn from the delivery settings when it was sent (delivery.ts); absent: the default timeline. */
	delivery?: DeliveryPlan;
}

/** When each step of a default timeline comes, in ms after the send (messageStatus.ts). */
export interface Timeline {
	sent: number;
	delivered: number;
	read: number;
	failed: number;
}

/** What happens to an outbound message and when (service time in ms). */
export interface DeliveryPlan {
	/** The last status it reaches. */
	outcome: 'sent' | 'delivered' | 'read' | 'failed';
	/** Why it failed (B7 `error`). */
	reason?: string;
	sentAtMs: number;
	deliveredAtMs?: number;
	readAtMs?: number;
	failedAtMs?: number;
	/** The recipient answers at this time with `replyText`. */
	repliedAtMs?: number;
	replyText?: string;
}

export interface AgentRecord {
	id: string;
	businessId: string;
	/** Everything the agent holds except id and business, as GET shows it (tool descriptions aside). */
	fields: Record<string, unknown>;
}
