import { z } from 'zod/v4';

import { LIMITS } from '../limits';
import { boundedInt, email, isoTimestamp, jsonObject, nonEmptyString, uuid } from './common';
import { contactMessageSchema } from './message';

export const contactSchema = z.looseObject({
	uuid: nonEmptyString(),
	name: z.string(),
	phoneNumber: z.string(),
	avatarUrl: z.string().nullable(),
	createdAt: isoTimestamp(),
	source: z.string(),
	closedAt: z.string().nullable(),
	href: z.string(),
	conversationHref: z.string(),
	tags: z.array(z.string()),
	assignedUser: z.string().nullable(),
	customFields: z.record(z.string(), z.unknown()),
});
export type Contact = z.infer<typeof contactSchema>;

/** Contact-management responses wrap the one contact in an array: `{ contact: [ Contact ] }`. */
export const contactEnvelope = z.looseObject({ contact: z.array(contactSchema).min(1) });

export const contactParams = z.object({ uuid: uuid() });

export const updateContactBody = z
	.object({
		name: nonEmptyString().optional(),
		tags: z.array(z.string()).optional(),
		custom_fields: jsonObject().optional(),
		assigned_user: email().optional(),
		unassign_user: z.boolean().optional(),
	})
	.check((ctx) => {
		if (ctx.value.assigned_user !== undefined && ctx.value.unassign_user === true) {
			ctx.issues.push({
				code: 'custom',
				input: ctx.value,
				path: ['unassign_user'],
				message: 'cannot be true together with assigned_user; send one or the other',
			});
		}
	});

export const contactMessagesQuery = z.object({
	limit: boundedInt(LIMITS.contactMessagesLimit.max).optional(),
});

export const contactMessagesResponse = z.looseObject({ messages: z.array(contactMessageSchema) });
