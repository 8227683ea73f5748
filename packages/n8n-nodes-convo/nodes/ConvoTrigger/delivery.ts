import type { IDataObject } from 'n8n-workflow';

import { messageCreatedEventSchema, toContractIssues } from '../shared';

export type DeliveryResult = { ok: true; payload: IDataObject; rawBody: string } | { ok: false; reason: string };

const EXPECTED = 'expected a JSON object {"event": "message_created", "payload": {...}}';

function isPlainObject(value: unknown): value is IDataObject {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads a delivery from what n8n parsed (`body`) and the bytes that arrived (`rawBody`). n8n
 * parses JSON only when the request says application/json; a JSON body sent as text/plain or
 * without a content type is parsed here. The payload is returned as it arrived (not as zod
 * rebuilt it) so the optional message-type fields pass through untouched.
 */
export function readDelivery(body: unknown, rawBody: Buffer | undefined): DeliveryResult {
	const rawText = rawBody !== undefined && rawBody.length > 0 ? rawBody.toString('utf8') : undefined;
	let value: unknown = body;
	if (!isPlainObject(body)) {
		const text = typeof body === 'string' ? body : rawText;
		if (text === undefined || text.trim() === '') return { ok: false, reason: `The body is empty; ${EXPECTED}` };
		try {
			value = JSON.parse(text);
		} catch {
			// The parser's message quotes the body; the reason stays generic.
			return { ok: false, reason: `The body is not valid JSON; ${EXPECTED}` };
		}
		if (!isPlainObject(value)) {
			return { ok: false, reason: `The body is JSON but not an object; ${EXPECTED}` };
		}
	}
	const parsed = messageCreatedEventSchema.safeParse(value, { reportInput: true });
	if (!parsed.success) {
		const issues = toContractIssues(parsed.error, 'event').map((issue) => issue.message);
		return { ok: false, reason: `Not a message_created delivery: ${issues.join('; ')}` };
	}
	const payload = (value as { payload: IDataObject }).payload;
	return { ok: true, payload, rawBody: rawText ?? JSON.stringify(value) };
}
