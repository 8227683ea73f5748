import { z } from 'zod/v4';

export const MESSAGE_CREATED = 'message_created';
export const WEBHOOK_MESSAGE_STATUSES = ['received', 'sent'] as const;

export const eventContactSchema = z.looseObject({
	href: z.string(),
	conversationHref: z.string(),
	name: z.string(),
	tags: z.array(z.string()),
	uuid: z.string(),
	source: z.string(),
	avatarUrl: z.string().nullable(),
	createdAt: z.string(),
	phoneNumber: z.string(),
});

/**
 * Loose on purpose: the optional fields present only for some message types (messageContactCard,
 * messageContext, messageForward, messageInteractiveList, messageLocation, messageReplyButton) have
 * no shown inner shape and pass through untouched.
 */
export const messageCreatedPayloadSchema = z.looseObject({
	to: z.string(),
	from: z.string(),
	text: z.string(),
	attachments: z.array(z.unknown()),
	status: z.string(),
	channel: z.string(),
	contact: eventContactSchema,
	createdAt: z.string(),
	metadata: z.record(z.string(), z.unknown()),
});
export type MessageCreatedPayload = z.infer<typeof messageCreatedPayloadSchema>;

export const messageCreatedEventSchema = z.object({
	event: z.literal(MESSAGE_CREATED, { error: `must be "${MESSAGE_CREATED}"` }),
	payload: messageCreatedPayloadSchema,
});
export type MessageCreatedEvent = z.infer<typeof messageCreatedEventSchema>;
