/** message_created bodies as SPEC section 6 shows them, for the trigger tests. */
export interface DeliveryOverrides {
	payload?: Record<string, unknown>;
	event?: string;
}

export function messagePayload(overrides: Record<string, unknown> = {}): Record<string, unknown> {
	return {
		to: '4930123456',
		from: '4915112345678',
		text: 'Hello, is my order on its way?',
		attachments: [],
		status: 'received',
		channel: 'whatsapp',
		contact: {
			href: 'https://dashboard.example.com/contacts/c-1',
			conversationHref: 'https://dashboard.example.com/conversations/v-1',
			name: 'Ada Lovelace',
			tags: ['vip'],
			uuid: '0b6f6c1e-2f1e-4d7a-9a55-0c1d2e3f4a5b',
			source: 'whatsapp',
			avatarUrl: null,
			createdAt: '2026-11-20T10:00:00+00:00',
			phoneNumber: '+4915112345678',
		},
		createdAt: '2026-11-21T09:30:00+00:00',
		metadata: { orderId: 'A-17' },
		...overrides,
	};
}

export function delivery(overrides: DeliveryOverrides = {}): Record<string, unknown> {
	return { event: overrides.event ?? 'message_created', payload: messagePayload(overrides.payload) };
}
