/**
 * The service state: businesses and everything they own, kept in memory and indexed the ways the
 * endpoints look things up, so a lookup costs the same with ten contacts or a million (the
 * runner's benchmarks send 100,000 templates to as many recipients). `reset()` restores the fixture
 * (seeded by seed.ts through the add* methods).
 */
import type { Clock } from './clock';
import { newUuid } from './ids';
import type {
	AgentRecord,
	Business,
	Collection,
	Contact,
	Conversation,
	Message,
	MessageOrigin,
	SearchItem,
	Template,
	Timeline,
} from './model';

interface NewMessage {
	business: Business;
	contact: Contact;
	direction: 'inbound' | 'outbound';
	origin: MessageOrigin;
	from: string;
	to: string;
	type?: string;
	text: string;
	content?: Record<string, unknown>;
	metadata?: Record<string, unknown>;
	template?: Message['template'];
	request?: Message['request'];
	atMs?: number;
	uuid?: string;
}

export class Store {
	businesses: Business[] = [];
	templates = new Map<string, Template>();
	collections = new Map<string, Collection>();
	/** collection id -> external id -> item. */
	items = new Map<string, Map<string, SearchItem>>();
	contacts = new Map<string, Contact>();
	conversations = new Map<string, Conversation>();
	messages = new Map<string, Message>();
	agents = new Map<string, AgentRecord>();
	private byToken = new Map<string, Business>();
	private byApiKey = new Map<string, Business>();
	/** business id -> its contacts, in creation order. */
	private contactsByBusiness = new Map<string, Contact[]>();
	/** business id + phone digits -> contact. */
	private contactsByPhone = new Map<string, Contact>();
	/** contact uuid -> its conversations, oldest first. */
	private conversationsByContact = new Map<string, Conversation[]>();
	/** contact uuid -> its messages, oldest first. */
	private messagesByContact = new Map<string, Message[]>();
	/** Messages accepted through the API (A2, B8) in arrival order: all, and per business. */
	private accepted: Message[] = [];
	private acceptedByBusiness = new Map<string, Message[]>();

	/**
	 * `seed`: what `reset()` fills the emptied store with (seed.ts's fixture), given by whoever composes
	 * the sandbox; `timeline`: the default timeline every message stored follows (messageStatus.ts).
	 */
	constructor(
		readonly clock: Clock,
		private readonly seed: (store: Store) => void,
		readonly timeline: Readonly<Timeline>,
	) {
		this.reset();
	}

	reset(): void {
		this.businesses = [];
		this.accepted = [];
		for (const map of [
			this.templates,
			this.collections,
			this.items,
			this.contacts,
			this.conversations,
			this.messages,
			this.agents,
			this.byToken,
			this.byApiKey,
			this.contactsByBusiness,
			this.contactsByPhone,
			this.conversationsByContact,
			this.messagesByContact,
			this.acceptedByBusiness,
		]) {
			map.clear();
		}
		this.seed(this);
	}

	businessByToken(token: string): Business | undefined {
		return this.byToken.get(token);
	}

	businessByApiKey(key: string): Business | undefined {
		return this.byApiKey.get(key);
	}

	businessById(id: string): Business | undefined {
		return this.businesses.find((business) => business.id === id);
	}

	/** The business's contact whose phone digits equal `digits`. */
	contactByDigits(business: Business, digits: string): Contact | undefined {
		return this.contactsByPhone.get(phoneKey(business.id, digits));
	}

	contactsOf(business: Business): readonly Contact[] {
		return this.contactsByBusiness.get(business.id) ?? [];
	}

	conversationsOf(contact: Contact): readonly Conversation[] {
		return this.conversationsByContact.get(contact.uuid) ?? [];
	}

	/** Messages accepted through the API (A2 and B8), of one business or all, in arrival order. */
	acceptedMessages(business?: Business): readonly Message[] {
		return business ? (this.acceptedByBusiness.get(business.id) ?? []) : this.accepted;
	}

	/** The conversation new messages go to: the contact's newest, created when there is none. */
	currentConversation(contact: Contact): Conversation {
		const existing = this.conversationsOf(contact);
		if (existing.length > 0) return existing[existing.length - 1];
		return this.addConversation({
			id: newUuid(),
			businessId: contact.businessId,
			contactUuid: contact.uuid,
			platform: 'whatsapp',
			createdAt: this.clock.iso(),
			closedAt: null,
			tags: [...contact.tags],
			agentId: null,
			assignedUser: null,
			teamUuid: null,
		});
	}

	createContact(business: Business, digits: string, name = `+${digits}`): Contact {
		return this.addContact({
			uuid: newUuid(),
			businessId: business.id,
			name,
			phoneNumber: `+${digits}`,
			avatarUrl: null,
			createdAt: this.clock.iso(),
			source: 'whatsapp',
			tags: [],
			assignedUser: null,
			customFields: {},
			undeliverable: false,
		});
	}

	addBusiness(business: Business): Business {
		this.businesses.push(business);
		this.byToken.set(business.accessToken, business);
		this.byApiKey.set(business.apiKey, business);
		return business;
	}

	addContact(contact: Contact): Contact {
		this.contacts.set(contact.uuid, contact);
		this.contactsByPhone.set(phoneKey(contact.businessId, contact.phoneNumber.slice(1)), contact);
		appendTo(this.contactsByBusiness, contact.businessId, contact);
		return contact;
	}

	addConversation(conversation: Conversation): Conversation {
		this.conversations.set(conversation.id, conversation);
		appendTo(this.conversationsByContact, conversation.contactUuid, conversation);
		return conversation;
	}

	addMessage(input: NewMessage): Message {
		const conversation = this.currentConversation(input.contact);
		const message: Message = {
			uuid: input.uuid ?? newUuid(),
			businessId: input.business.id,
			contactUuid: input.contact.uuid,
			conversationId: conversation.id,
			direction: input.direction,
			origin: input.origin,
			from: input.from,
			to: input.to,
			type: input.type ?? 'text',
			text: input.text,
			content: input.content ?? { text: input.text },
			attachments: [],
			metadata: input.metadata ?? {},
			createdAtMs: input.atMs ?? this.clock.now(),
			template: input.template,
			request: input.request,
			statusRecordId: newUuid(),
			whatsappMessageId: `wamid.${newUuid().replace(/-/g, '')}`,
			undeliverable: input.direction === 'outbound' && input.contact.undeliverable,
			timeline: this.timeline,
		};
		this.messages.set(message.uuid, message);
		const list = appendTo(this.messagesByContact, message.contactUuid, message);
		// Fixture history is seeded out of order; live messages arrive in order and skip the sort.
		if (list.length > 1 && list[list.length - 2].createdAtMs > message.createdAtMs)
			list.sort((a, b) => a.createdAtMs - b.createdAtMs);
		if (message.origin === 'api' || message.origin === 'template') {
			this.accepted.push(message);
			appendTo(this.acceptedByBusiness, message.businessId, message);
		}
		return message;
	}

	messagesOf(contact: Contact): readonly Message[] {
		return this.messagesByContact.get(contact.uuid) ?? [];
	}

	/** Time of the contact's last inbound message, for the 24-hour customer-care window. */
	lastInboundAt(contact: Contact): number | undefined {
		const list = this.messagesOf(contact);
		for (let i = list.length - 1; i >= 0; i--) if (list[i].direction === 'inbound') return list[i].createdAtMs;
		return undefined;
	}
}

const phoneKey = (businessId: string, digits: string) => `${businessId} ${digits}`;

function appendTo<T>(index: Map<string, T[]>, key: string, value: T): T[] {
	const list = index.get(key);
	if (list) {
		list.push(value);
		return list;
	}
	const created = [value];
	index.set(key, created);
	return created;
}
