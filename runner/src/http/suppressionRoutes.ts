/**
 * The suppression list's routes of the control API: thin over its doors in core/. The phone in a path is the
 * route's `:id` (digits with country code; a "+" and separators are accepted, encoded).
 */
import { Readable as ReadableStream } from 'node:stream';

import { z } from 'zod/v4';

import { addSuppressionBody, listSuppressionsQuery, parsePhoneNumber } from 'convo-contract';
import type { RunnerContext } from '../context';
import * as audience from '../core/audience';
import { parseRecords } from '../core/campaigns';
import { FieldError } from '../errors';
import { at, InputError, type RouteTable } from './routes';
import { receiveUpload } from './uploads';

/** The phone in a path, in digits: refused as the route's `id` (400, field id) when it is none. */
const phoneParams = z.object({
	id: z.string().transform((value, ctx) => {
		const parsed = parsePhoneNumber(value);
		if (parsed.ok) return parsed.digits;
		ctx.issues.push({
			code: 'custom',
			input: value,
			message: `must be a phone number with country code: it ${parsed.rule}`,
		});
		return z.NEVER;
	}),
});

/** POST /api/suppressions/import: rows read, phones added, already there, rejected rows (the first few). */
const importAnswer = z.object({
	rows: z.int().min(0),
	added: z.int().min(0),
	already: z.int().min(0),
	rejected: z.int().min(0),
	rejections: z.array(z.object({ line: z.int().min(1), reason: z.string() })),
});

/** The API's name of a phone in a body. */
const PHONE = 'phone';

/** A core error about the phone as a 400 naming the API's field. */
async function asField<T>(work: () => Promise<T>): Promise<T> {
	try {
		return await work();
	} catch (error) {
		if (error instanceof FieldError) throw new InputError(error.message, error.field);
		throw error;
	}
}

export function suppressionRoutes(routes: RouteTable, context: RunnerContext): void {
	routes.add(
		{
			...at('addSuppression'),
			tag: 'suppressions',
			summary:
				'Put a phone on the suppression list (source operator, or workflow): no marketing campaign sends to it; ' +
				'a phone already there keeps its first entry, unless a keyword made it (this entry replaces it); ' +
				'past RUNNER_MAX_SUPPRESSIONS entries, 409',
			body: addSuppressionBody,
			success: [200, '{ phone, reason, source, at, added }'],
		},
		async ({ body }) =>
			asField(() =>
				audience.addSuppression(
					context,
					{ phone: body.phone, reason: body.reason, source: body.source ?? 'operator' },
					PHONE,
				),
			),
	);
	routes.add(
		{
			...at('listSuppressions'),
			tag: 'suppressions',
			summary: 'The suppression list, newest first, a page at a time',
			query: listSuppressionsQuery,
			success: [200, '{ items: [{ phone, reason, source, at }], total, limit, offset }'],
		},
		async ({ query }) => audience.pageSuppressions(context, query),
	);
	routes.add(
		{
			method: 'GET',
			url: '/api/suppressions/export',
			operationId: 'exportSuppressions',
			tag: 'suppressions',
			summary: 'The whole suppression list as CSV: phone,reason,source,at, oldest first',
			produces: ['text/csv'],
			success: [200, 'CSV'],
		},
		async ({ reply }) => {
			reply.type('text/csv; charset=utf-8');
			reply.header('content-disposition', 'attachment; filename="suppressions.csv"');
			return ReadableStream.from(audience.suppressionCsv(context));
		},
	);
	routes.add(
		{
			method: 'POST',
			url: '/api/suppressions/import',
			operationId: 'importSuppressions',
			tag: 'suppressions',
			summary:
				'Import a CSV body (text/csv) with a phone column and optionally reason: ' +
				'each good row goes on the list (source import), a bad row is reported with its line',
			consumes: ['text/csv'],
			success: [200, '{ rows, added, already, rejected, rejections: [{ line, reason }] }'],
			answer: importAnswer,
		},
		async ({ request, reply }) => {
			const type = String(request.headers['content-type'] ?? '')
				.split(';')[0]
				.trim()
				.toLowerCase();
			if (type !== 'text/csv')
				throw new InputError('the import is a CSV body: send it with content-type text/csv', 'content-type');
			return receiveUpload(request, reply, context.config, audience.IMPORT_STOPPED, (body) =>
				audience.importSuppressionRecords(context, parseRecords(body, 'csv', 'the upload')),
			);
		},
	);
	routes.add(
		{
			...at('checkSuppression'),
			tag: 'suppressions',
			summary: 'Whether a phone (the id: digits with country code) is on the suppression list, with its entry',
			params: phoneParams,
			success: [200, '{ phone, suppressed, entry: { phone, reason, source, at } | null }'],
		},
		async ({ params }) => audience.checkSuppression(context, params.id, 'id'),
	);
	routes.add(
		{
			...at('removeSuppression'),
			tag: 'suppressions',
			summary: 'Take a phone (the id) off the suppression list; removed is false when it was not on it',
			params: phoneParams,
			success: [200, '{ phone, removed }'],
		},
		async ({ params }) => audience.removeSuppression(context, params.id, 'id'),
	);
}
