import type { ServedTrigger, TriggerServerOptions } from '../harness/webhook';
import { serveTrigger } from '../harness/webhook';
import { delivery, messagePayload } from './deliveries';

const AUTH = { headerName: 'X-Convo-Webhook-Secret', secret: 'whsec-3b1f9c0e7d2a4a6b8c5e' };

let served: ServedTrigger | undefined;

async function serve(options: TriggerServerOptions = {}): Promise<ServedTrigger> {
	served = await serveTrigger(options);
	return served;
}

afterEach(async () => {
	await served?.close();
	served = undefined;
});

interface Sent {
	status: number;
	body: Record<string, unknown>;
}

async function send(
	trigger: ServedTrigger,
	body: unknown,
	init: { method?: string; headers?: Record<string, string>; raw?: boolean } = {},
): Promise<Sent> {
	const response = await fetch(trigger.url, {
		method: init.method ?? 'POST',
		headers: { 'content-type': 'application/json', ...init.headers },
		body: init.raw === true ? (body as string) : JSON.stringify(body),
	});
	const text = await response.text();
	return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

/** After a refused or ignored delivery: nothing started, nothing ran, the node did not throw. */
function expectNoExecution(trigger: ServedTrigger): void {
	expect(trigger.started()).toBe(0);
	expect(trigger.executions).toHaveLength(0);
	expect(trigger.webhookErrors).toEqual([]);
}

describe('Convo Trigger through n8n-core webhook execution', () => {
	it('publishes the production URL n8n computes for the node and listens on POST by default', async () => {
		const trigger = await serve();
		expect(trigger.method).toBe('POST');
		expect(trigger.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/webhook\/[0-9a-f-]{36}\/convo$/);
	});

	it('turns an accepted delivery into exactly one item holding the payload', async () => {
		const trigger = await serve();
		const body = delivery();
		const answer = await send(trigger, body);
		expect(answer.status).toBe(200);
		const [execution] = await trigger.waitForExecutions(1);
		expect(execution.items).toHaveLength(1);
		expect(execution.items[0].json).toEqual(body.payload);
		expect(execution.items[0].json.contact).toEqual(expect.objectContaining({ name: 'Ada Lovelace', avatarUrl: null }));
		expect(execution.run.status).toBe('success');
		expect(trigger.started()).toBe(1);
	});

	it('passes the optional message-type fields and unknown fields through untouched', async () => {
		const trigger = await serve();
		const extras = {
			messageContext: { replyTo: 'wamid.1', nested: { deep: [1, { two: 2 }] } },
			messageLocation: { latitude: 52.52, longitude: 13.405, name: 'Berlin' },
			messageReplyButton: { id: 'yes', title: 'Yes' },
			messageContactCard: [{ name: 'Bob', phones: ['+4917000000'] }],
			messageForward: true,
			messageInteractiveList: { sections: [] },
			somethingNew: 'kept',
		};
		const body = delivery({ payload: extras });
		expect((await send(trigger, body)).status).toBe(200);
		const [execution] = await trigger.waitForExecutions(1);
		expect(execution.items[0].json).toEqual(messagePayload(extras));
	});

	describe('header authentication', () => {
		it('accepts the right header (any case of its name) and does not leak the secret into the item', async () => {
			const trigger = await serve({ auth: AUTH, parameters: { options: { includeHeaders: true } } });
			const answer = await send(trigger, delivery(), { headers: { 'x-convo-webhook-secret': AUTH.secret } });
			expect(answer.status).toBe(200);
			const [execution] = await trigger.waitForExecutions(1);
			expect(JSON.stringify(execution.items)).not.toContain(AUTH.secret);
			const headers = (execution.items[0].json.delivery as { headers: Record<string, string> }).headers;
			expect(headers['x-convo-webhook-secret']).toBe('[hidden]');
		});

		it.each([
			['a wrong value', { [AUTH.headerName]: 'whsec-wrong' }],
			['a value that is a prefix of the secret', { [AUTH.headerName]: AUTH.secret.slice(0, 10) }],
			['the secret under another header', { Authorization: AUTH.secret }],
			['no header at all', {}],
		])('refuses %s with 401 and starts nothing', async (_label, headers) => {
			const trigger = await serve({ auth: AUTH });
			const answer = await send(trigger, delivery(), { headers });
			expect(answer.status).toBe(401);
			expect(String(answer.body.message)).toMatch(/Authorization failed/);
			expect(JSON.stringify(answer.body)).not.toContain(AUTH.secret);
			expectNoExecution(trigger);
		});

		it('checks the header before reading the body', async () => {
			const trigger = await serve({ auth: AUTH });
			const answer = await send(trigger, { event: 'nope' });
			expect(answer.status).toBe(401);
			expectNoExecution(trigger);
		});

		it('accepts anything without authentication when none is configured', async () => {
			const trigger = await serve();
			expect((await send(trigger, delivery(), { headers: { [AUTH.headerName]: 'whatever' } })).status).toBe(200);
			await trigger.waitForExecutions(1);
		});
	});

	describe('body validation', () => {
		it('refuses another event name with 400 naming the field', async () => {
			const trigger = await serve();
			const answer = await send(trigger, delivery({ event: 'message_updated' }));
			expect(answer.status).toBe(400);
			expect(String(answer.body.message)).toMatch(/event/);
			expectNoExecution(trigger);
		});

		it('refuses a missing payload with 400', async () => {
			const trigger = await serve();
			const answer = await send(trigger, { event: 'message_created' });
			expect(answer.status).toBe(400);
			expect(String(answer.body.message)).toMatch(/payload is required/);
			expectNoExecution(trigger);
		});

		it('refuses a payload missing a required field or with a wrong type, naming it', async () => {
			const trigger = await serve();
			const payload = messagePayload({ attachments: 'none' });
			delete payload.text;
			const answer = await send(trigger, { event: 'message_created', payload });
			expect(answer.status).toBe(400);
			expect(String(answer.body.message)).toMatch(/payload\.text is required/);
			expect(String(answer.body.message)).toMatch(/payload\.attachments must be an array/);
			expectNoExecution(trigger);
		});

		it('refuses a body that is not JSON with 400 (sent as text/plain, which n8n hands to the node)', async () => {
			const trigger = await serve();
			const answer = await send(trigger, '{"event": "message_created", payl', {
				raw: true,
				headers: { 'content-type': 'text/plain' },
			});
			expect(answer.status).toBe(400);
			expect(String(answer.body.message)).toMatch(/not valid JSON/);
			expectNoExecution(trigger);
		});

		it('refuses JSON that is not an object, and an empty body, with 400', async () => {
			const trigger = await serve();
			const array = await send(trigger, [delivery()]);
			expect(array.status).toBe(400);
			expect(String(array.body.message)).toMatch(/not an object/);
			const empty = await send(trigger, '', { raw: true });
			expect(empty.status).toBe(400);
			expect(String(empty.body.message)).toMatch(/empty/);
			expectNoExecution(trigger);
		});

		it('leaves malformed application/json to n8n, which refuses it with 422 before the node runs', async () => {
			const trigger = await serve();
			const answer = await send(trigger, '{not json', { raw: true });
			expect(answer.status).toBe(422);
			expectNoExecution(trigger);
		});

		it('reads a JSON body sent as text/plain', async () => {
			const trigger = await serve();
			const body = delivery();
			const answer = await send(trigger, JSON.stringify(body), {
				raw: true,
				headers: { 'content-type': 'text/plain' },
			});
			expect(answer.status).toBe(200);
			const [execution] = await trigger.waitForExecutions(1);
			expect(execution.items[0].json).toEqual(body.payload);
		});
	});

	describe('filters', () => {
		it('answers 200 and starts nothing for a sent message under the default Trigger On (Message Received)', async () => {
			const trigger = await serve();
			const answer = await send(trigger, delivery({ payload: { status: 'sent' } }));
			expect(answer.status).toBe(200);
			expect(answer.body).toEqual({ received: true, ignored: 'message status "sent" is not chosen in Trigger On' });
			expectNoExecution(trigger);
		});

		it('with Trigger On "Message Sent" ignores received messages and takes sent ones', async () => {
			const trigger = await serve({ parameters: { triggerOn: 'sent' } });
			expect((await send(trigger, delivery())).status).toBe(200);
			expect(trigger.started()).toBe(0);
			expect((await send(trigger, delivery({ payload: { status: 'sent' } }))).status).toBe(200);
			const [execution] = await trigger.waitForExecutions(1);
			expect(execution.items[0].json.status).toBe('sent');
			expect(trigger.started()).toBe(1);
		});

		it('with Trigger On "Any Message" takes received and sent but not an undocumented status', async () => {
			const trigger = await serve({ parameters: { triggerOn: 'any' } });
			await send(trigger, delivery());
			await send(trigger, delivery({ payload: { status: 'sent' } }));
			const odd = await send(trigger, delivery({ payload: { status: 'delivered' } }));
			expect(odd.body.ignored).toBe('message status "delivered" is not chosen in Trigger On');
			const executions = await trigger.waitForExecutions(2);
			expect(executions.map((e) => e.items[0].json.status)).toEqual(['received', 'sent']);
			expect(trigger.started()).toBe(2);
		});

		it('filters by channel, case-insensitively', async () => {
			const trigger = await serve({ parameters: { channels: ' WhatsApp , telegram' } });
			expect((await send(trigger, delivery({ payload: { channel: 'sms' } }))).body.ignored).toBe(
				'channel "sms" is not selected',
			);
			expect(trigger.started()).toBe(0);
			await send(trigger, delivery({ payload: { channel: 'whatsapp' } }));
			await trigger.waitForExecutions(1);
		});

		it('ignores API sends from the given business numbers, whatever their formatting, and nothing else', async () => {
			const trigger = await serve({
				parameters: { triggerOn: 'any', ignoreSendsFrom: '+49 30 123456, 0044 20 7946 0000' },
			});
			const own = await send(
				trigger,
				delivery({ payload: { status: 'sent', from: '4930123456', to: '4915112345678' } }),
			);
			expect(own.body.ignored).toBe('sent through the API from an ignored business number');
			expect(trigger.started()).toBe(0);
			// Another business number of the same account still triggers.
			await send(trigger, delivery({ payload: { status: 'sent', from: '4930999999' } }));
			// An inbound message whose sender matches (it cannot be the business) is not an API send.
			await send(trigger, delivery({ payload: { status: 'received', from: '4930123456' } }));
			const executions = await trigger.waitForExecutions(2);
			expect(executions.map((e) => e.items[0].json.from)).toEqual(['4930999999', '4930123456']);
		});
	});

	describe('HTTP method', () => {
		it('listens on PUT when configured and refuses POST there', async () => {
			const trigger = await serve({ parameters: { httpMethod: 'PUT' } });
			expect(trigger.method).toBe('PUT');
			const put = await send(trigger, delivery(), { method: 'PUT' });
			expect(put.status).toBe(200);
			await trigger.waitForExecutions(1);
			const post = await send(trigger, delivery(), { method: 'POST' });
			expect(post.status).toBe(404);
			expect(String(post.body.message)).toMatch(/not registered for POST/);
			expect(trigger.started()).toBe(1);
		});
	});

	describe('output options', () => {
		it('adds the raw body and the headers under delivery', async () => {
			const trigger = await serve({ parameters: { options: { includeRawBody: true, includeHeaders: true } } });
			const raw = JSON.stringify(delivery(), null, 2);
			await send(trigger, raw, { raw: true, headers: { 'x-request-id': 'req-7' } });
			const [execution] = await trigger.waitForExecutions(1);
			const extra = execution.items[0].json.delivery as { rawBody: string; headers: Record<string, string> };
			expect(extra.rawBody).toBe(raw);
			expect(extra.headers['x-request-id']).toBe('req-7');
			expect(extra.headers['content-type']).toBe('application/json');
		});

		it('adds nothing by default', async () => {
			const trigger = await serve();
			await send(trigger, delivery());
			const [execution] = await trigger.waitForExecutions(1);
			expect(execution.items[0].json.delivery).toBeUndefined();
		});
	});
});
