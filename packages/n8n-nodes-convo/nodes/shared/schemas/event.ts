import { z } from 'zod/v4';

import { isoTimestamp, nonEmptyString } from './common';

export const MESSAGE_CREATED = 'message_created';
export const WEBHOOK_MESSAGE_STATUSES = ['received', 'sent'] as const;

/** The contact inside a message_created payload; contact-management answers extend it (SPEC 2.3). */
export const eventContactSchema = z.looseObject({
	href: z.string(),
	conversationHref: z.string(),
	name: z.string(),
	tags: z.array(z.string()),
	uuid: nonEmptyString(),
	source: z.string(),
	avatarUrl: z.string().nullable(),
	createdAt: isoTimestamp(),
	phoneNumber: z.string(),
});

/**
 * Loose on purpose: the optional fields present only for some message types (messageContactCard,
 * messageContext, messageForward, messageInteractiveList, messageLocation, messageReplyButton) have
 * no shown inner shape and pass through untouched.
 */
const messageCreatedPayloadSchema = z.looseObject({
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

export const messageCreatedEventSchema = z.object({
	event: z.literal(MESSAGE_CREATED, { error: `must be "${MESSAGE_CREATED}"` }),
	payload: messageCreatedPayloadSchema,
});
