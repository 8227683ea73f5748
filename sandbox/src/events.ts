/** The message_created payload (SPEC 6) for a stored message. */
import type { Contact, Message } from './model';
import type { Store } from './store';
import { eventContactView, type Links } from './views';
import type { WebhookHub } from './webhooks';

/**
 * What an event is made and sent with: the part of the SandboxContext
 * it uses (context.ts names the delivery, which emits events).
 */
export interface EmittingContext {
	webhooks: WebhookHub;
	store: Store;
	links: Links;
}

export function emitMessageCreated(
	context: EmittingContext,
	message: Message,
	contact: Contact,
	status: 'received' | 'sent',
): void {
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
