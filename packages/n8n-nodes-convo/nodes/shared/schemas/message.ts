import { z } from 'zod/v4';

import { LIMITS } from '../limits';
import { email, isoTimestamp, nonEmptyString, uuid } from './common';

/** `text` is the type shown; media types are sent with a `url` in `content` (SPEC A2 rule 2). */
export const MEDIA_MESSAGE_TYPES = ['image', 'document', 'audio', 'video'] as const;
export const MESSAGE_TYPES = ['text', ...MEDIA_MESSAGE_TYPES] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];

/** Caption is WhatsApp's own rule: images, videos and documents carry one, audio does not. */
export const CAPTIONED_MESSAGE_TYPES: readonly MessageType[] = ['image', 'video', 'document'];

export const EXTRA_RESPONSE_FIELDS = ['contact', 'conversation'] as const;
const EXTRA_FIELD = EXTRA_RESPONSE_FIELDS.join('|');
export const BOT_STATUSES = ['bot_start', 'bot_end'] as const;

const metadataSchema = z
	.record(
		z.string().max(LIMITS.metadataKeyLength, {
			error: (issue) =>
				`key "${String(issue.input)}" is ${String(issue.input).length} characters; at most ${LIMITS.metadataKeyLength}`,
		}),
		z.string({ error: 'values must be strings' }).max(LIMITS.metadataValueLength, {
			error: (issue) => `value is ${String(issue.input).length} characters; at most ${LIMITS.metadataValueLength}`,
		}),
	)
	.check((ctx) => {
		const pairs = Object.keys(ctx.value).length;
		if (pairs > LIMITS.metadataPairs) {
			ctx.issues.push({
				code: 'custom',
				input: ctx.value,
				message: `has ${pairs} pairs; at most ${LIMITS.metadataPairs}`,
			});
		}
	});

const textContent = z.object({ text: z.string() });
const mediaContent = z.object({
	url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
	caption: z.string().optional(),
	filename: z.string().optional(),
});

export const sendMessageBody = z
	.object({
		to: nonEmptyString(),
		from: nonEmptyString(),
		type: z.enum(MESSAGE_TYPES),
		content: z.looseObject({}),
		channel_uuid: uuid(),
		template_uuid: nonEmptyString().optional(),
		optin_contact: z.boolean().optional(),
		template_values: z.array(z.string()).optional(),
		assigned_user: email().optional(),
		team_uuid: uuid().optional(),
		fields: z
			.string()
			.regex(new RegExp(`^(${EXTRA_FIELD})(,(${EXTRA_FIELD}))*$`), {
				error: `must be a comma-separated list of: ${EXTRA_RESPONSE_FIELDS.join(', ')}`,
			})
			.optional(),
		bot_status: z.enum(BOT_STATUSES).optional(),
		metadata: metadataSchema.optional(),
	})
	.check((ctx) => {
		const { type, content, template_uuid } = ctx.value;
		const isMedia = type !== 'text';
		const parsed = (isMedia ? mediaContent : textContent).safeParse(content);
		if (!parsed.success) {
			ctx.issues.push({
				code: 'custom',
				input: content,
				path: ['content', ...(parsed.error.issues[0]?.path ?? [])],
				message: isMedia
					? `must be an object with an http(s) "url" for a ${type} message`
					: 'must be an object with a "text" string for a text message',
			});
			return;
		}
		// A template message carries its text in the template; any other text message needs some.
		if (!isMedia && template_uuid === undefined && (content as { text: string }).text.trim() === '') {
			ctx.issues.push({ code: 'custom', input: content, path: ['content', 'text'], message: 'must not be empty' });
		}
		if (isMedia && 'caption' in content && !CAPTIONED_MESSAGE_TYPES.includes(type)) {
			ctx.issues.push({
				code: 'custom',
				input: content,
				path: ['content', 'caption'],
				message: `is not allowed for ${type} messages (only ${CAPTIONED_MESSAGE_TYPES.join(', ')})`,
			});
		}
	});

export const sendMessageResponse = z.looseObject({
	message: z.looseObject({ uuid: nonEmptyString(), status: z.string() }),
});

export const messageStatusParams = z.object({ uuid: nonEmptyString() });

export const messageStatusResponse = z.looseObject({
	message: z.looseObject({
		uuid: nonEmptyString(),
		status: z.string(),
		messageStatusPayload: z.looseObject({
			id: z.string(),
			type: z.string(),
			payload: z.looseObject({ type: z.string(), whatsappMessageId: z.string() }),
			destination: z.string(),
		}),
	}),
});

export const contactMessageSchema = z.looseObject({
	uuid: nonEmptyString(),
	status: z.string(),
	channel: z.string(),
	createdAt: isoTimestamp(),
	from: z.string(),
	to: z.string(),
	text: z.string(),
	attachments: z.array(z.unknown()),
	metadata: z.record(z.string(), z.unknown()),
});
