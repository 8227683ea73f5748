/** The message_created payload (SPEC 6) for a stored message. */
import type { SandboxContext } from './context';
import type { Contact, Message } from './model';
import { eventContactView } from './views';

export function emitMessageCreated(context: Pick<SandboxContext, 'webhooks' | 'store' | 'links'>, message: Message, contact: Contact, status: 'received' | 'sent'): void {
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
