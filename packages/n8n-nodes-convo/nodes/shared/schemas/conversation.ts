import { z } from 'zod/v4';

import { LIMITS } from '../limits';
import { boundedInt, isoTimestamp, nonEmptyString, phoneDigits } from './common';

export const CONVERSATION_MESSAGE_STATUSES = ['ERROR', 'DELIVERED', 'RECEIVED', 'READ'] as const;

export const getConversationQuery = z
	.object({
		phone: phoneDigits().optional(),
		field_key: nonEmptyString().optional(),
		field_value: nonEmptyString().optional(),
		message_limit: boundedInt(LIMITS.conversationMessageLimit.max).optional(),
	})
	.check((ctx) => {
		const { phone, field_key, field_value } = ctx.value;
		// A field that broke its own rule is missing from the value but was given: no second error.
		const given = (field: string, value: unknown) =>
			value !== undefined || ctx.issues.some((issue) => issue.path?.[0] === field);
		if (given('field_key', field_key) && !given('field_value', field_value)) {
			ctx.issues.push({
				code: 'custom',
				input: ctx.value,
				path: ['field_value'],
				message: 'is required when field_key is given',
			});
		}
		if (given('field_value', field_value) && !given('field_key', field_key)) {
			ctx.issues.push({
				code: 'custom',
				input: ctx.value,
				path: ['field_key'],
				message: 'is required when field_value is given',
			});
		}
		if (!given('phone', phone) && !given('field_key', field_key) && !given('field_value', field_value)) {
			ctx.issues.push({
				code: 'custom',
				input: ctx.value,
				path: [],
				message: 'needs at least one lookup method: phone, or field_key with field_value',
			});
		}
	});

const conversationMessageSchema = z.looseObject({
	id: nonEmptyString(),
	text: z.string(),
	direction: z.enum(['inbound', 'outbound']),
	status: z.string(),
	error: z.string().nullable(),
	created_at: isoTimestamp(),
});

export const getConversationResponse = z.looseObject({
	contact: z.looseObject({
		id: nonEmptyString(),
		first_name: z.string(),
		last_name: z.string(),
		phone_number: z.string(),
	}),
	conversation: z.looseObject({
		id: nonEmptyString(),
		platform: z.string(),
		created_at: isoTimestamp(),
		last_message_at: isoTimestamp(),
		message_count: z.int(),
		messages: z.array(conversationMessageSchema),
	}),
});
