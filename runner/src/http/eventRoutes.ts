/**
 * The events endpoint: the service's `message_created` deliveries (SPEC 6), registered in its
 * dashboard (developer tools, event triggers) with POST or PUT and a custom header. The dashboard
 * cannot send the runner's bearer token, so the endpoint is protected as the Convo Trigger protects
 * its webhook (nodes/ConvoTrigger/auth.ts): a header name and a secret value the operator sets
 * (RUNNER_EVENTS_HEADER_NAME, RUNNER_EVENTS_HEADER_VALUE), compared in constant time. The server's
 * onRequest hook checks it before the body is read (server.ts); the route only checks the body.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

import { z } from 'zod/v4';

import type { RunnerConfig } from '../config';
import type { RunnerContext } from '../context';
import { receiveMessageCreated } from '../core/campaigns';
import type { RouteTable } from './routes';

export const EVENTS_PATH = '/api/events/message-created';
/** A message_created body holds one message (text up to a few KB, a contact, metadata): far less than this. */
export const EVENTS_BODY_LIMIT = 64 * 1024;

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/**
 * 'unset' when the endpoint is not configured; else whether the request carries the header with
 * exactly the value. Both sides are hashed first, so the comparison takes the same time whatever the
 * lengths; a header sent twice is refused (which copy is meant is ambiguous).
 */
export function eventsHeader(
	config: RunnerConfig,
	headers: Record<string, string | string[] | undefined>,
): 'unset' | 'ok' | 'wrong' {
	const name = config.RUNNER_EVENTS_HEADER_NAME;
	const value = config.RUNNER_EVENTS_HEADER_VALUE;
	if (name === undefined || value === undefined) return 'unset';
	const received = headers[name.toLowerCase()];
	if (typeof received !== 'string') return 'wrong';
	return timingSafeEqual(digest(received), digest(value)) ? 'ok' : 'wrong';
}

/**
 * What the runner reads of a delivery: `text` only to tell an opt-out or opt-in keyword (never
 * logged or stored); other payload fields (contact, attachments) are let through unread.
 */
const messageCreatedBody = z.object({
	event: z.literal('message_created'),
	payload: z.object({
		from: z.string().min(1).max(128),
		to: z.string().min(1).max(128),
		status: z.enum(['received', 'sent']),
		createdAt: z.iso.datetime({
			offset: true,
			error: 'must be an ISO 8601 time with its offset, e.g. 2026-01-31T12:00:00+00:00',
		}),
		text: z.unknown().optional(),
	}),
});

export function eventRoutes(routes: RouteTable, context: RunnerContext): void {
	for (const method of ['POST', 'PUT'] as const) {
		routes.add(
			{
				method,
				url: EVENTS_PATH,
				operationId: method === 'POST' ? 'postMessageCreated' : 'putMessageCreated',
				tag: 'runner',
				// No bearer token: the header of RUNNER_EVENTS_HEADER_NAME with
				// RUNNER_EVENTS_HEADER_VALUE (401 otherwise, 404 when unset).
				public: true,
				eventsHeader: true,
				summary:
					"The service's message_created event (register it in the dashboard: developer tools, event triggers; " +
					`${method === 'POST' ? 'POST or PUT' : 'PUT or POST'}; ` +
					'the header RUNNER_EVENTS_HEADER_NAME with the value RUNNER_EVENTS_HEADER_VALUE). A received message is ' +
					'attributed to the campaign that last messaged its sender within the reply period (RUNNER_REPLY_PERIOD), ' +
					'once any send to its sender still in flight is answered; ' +
					"sent ones (the runner's own sends echoed) are ignored. A received message to one of the business's " +
					'numbers that is an opt-out keyword (STOP, ...; RUNNER_OPTOUT_KEYWORDS) ' +
					"puts its sender on the suppression list, an opt-in keyword (START, ...) takes a keyword's entry off, " +
					"each only when it is the phone's newest keyword message by its createdAt",
				body: messageCreatedBody,
				success: [200, 'taken, whatever became of it'],
				answer: z.object({ received: z.literal(true) }),
				errors: {
					401: 'missing or wrong events header',
					404: 'the events endpoint is not configured',
					413: `a body over ${EVENTS_BODY_LIMIT / 1024} KB`,
				},
			},
			async ({ body }) => {
				await receiveMessageCreated(context, body.payload);
				// The same answer whatever became of it: the sender learns nothing of campaigns or recipients.
				return { received: true } as const;
			},
		);
	}
}
