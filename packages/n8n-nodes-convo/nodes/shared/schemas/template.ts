import { z } from 'zod/v4';

import { phoneDigits, uuid } from './common';

export const sendTemplateQuery = z.object({
	template_id: uuid(),
	from_phone_number: phoneDigits(),
	agent_id: uuid().optional(),
});

const templateButtonSchema = z.object({
	index: z.int({ error: 'must be an integer (the button position)' }).min(0, { error: 'must be 0 or more' }),
	sub_type: z.literal('url'),
	text: z.string().min(1),
});

/** The platform rejects a URL sent as a body parameter (SPEC B8); it belongs in `buttons`. */
const URL_VALUE = /^\s*(https?:\/\/|www\.)/i;

/** Body fields other than these are template variables: "1", "2", ... or named ones. */
export const SEND_TEMPLATE_FIXED_FIELDS = ['phone', 'buttons'] as const;

export const sendTemplateBody = z
	.object({
		phone: phoneDigits(),
		buttons: z.array(templateButtonSchema).optional(),
	})
	.catchall(z.union([z.string(), z.number()], { error: 'must be a string or a number (template variable)' }))
	.check((ctx) => {
		for (const [key, value] of Object.entries(ctx.value)) {
			if ((SEND_TEMPLATE_FIXED_FIELDS as readonly string[]).includes(key)) continue;
			if (typeof value === 'string' && URL_VALUE.test(value)) {
				ctx.issues.push({
					code: 'custom',
					input: value,
					path: [key],
					// Variables are named "1", "2", ...: the sentence says "variable 1 holds a URL", not "1 holds a URL".
					params: { noun: 'variable' },
					message:
						'holds a URL; the platform refuses URLs as body variables: send a dynamic URL button value in buttons',
				});
			}
		}
	});

export const sendTemplateResponse = z.looseObject({
	success: z.boolean(),
	message_id: z.string(),
	recipient: z.string(),
	template_name: z.string(),
});
