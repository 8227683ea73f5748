/** The message_created payload (SPEC 6) for a stored message. */
import type { SandboxContext } from './context';
import type { Message } from './model';
import { eventContactView } from './views';

export function emitMessageCreated(context: SandboxContext, message: Message, status: 'received' | 'sent'): void {
	const contact = context.store.contacts.get(message.contactUuid);
	if (!contact) return;
	context.webhooks.emit(message.businessId, {
		to: message.to,
		from: message.from,
		text: message.text,
		attachments: [...message.attachments],
		status,
		channel: 'whatsapp',
		contact: eventContactView(context.store, contact, context.links),
		createdAt: new Date(message.createdAtMs).toISOString().replace('Z', '+00:00'),
		metadata: { ...message.metadata },
	});
}
