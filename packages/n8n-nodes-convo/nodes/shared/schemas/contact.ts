import { z } from 'zod/v4';

import { LIMITS } from '../limits';
import { boundedInt, email, jsonObject, nonEmptyString, uuid } from './common';
import { eventContactSchema } from './event';
import { contactMessageSchema } from './message';

/** The contact of SPEC 2.3: the webhook's contact plus its conversation state, assignment and fields. */
const contactSchema = eventContactSchema.extend({
	closedAt: z.string().nullable(),
	assignedUser: z.string().nullable(),
	customFields: z.record(z.string(), z.unknown()),
});

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
