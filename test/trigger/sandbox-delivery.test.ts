/**
 * End to end: the sandbox itself delivers message_created to the trigger served over HTTP, the
 * way the service calls a URL registered in its dashboard.
 */
import type { RunningSandbox } from '../../sandbox/src';
import { startSandbox } from '../../sandbox/src';
import type { ServedTrigger, TriggerServerOptions } from '../harness/webhook';
import { serveTrigger } from '../harness/webhook';

const AUTH = { headerName: 'X-Convo-Webhook-Secret', secret: 'whsec-e2e-7c4d1a9b2f6e' };

let sandbox: RunningSandbox;
const triggers: ServedTrigger[] = [];

beforeAll(async () => {
	sandbox = await startSandbox({ port: 0 });
});

afterAll(async () => {
	await sandbox.close();
});

beforeEach(async () => {
	await admin('POST', '/__sandbox/reset');
});

afterEach(async () => {
	await Promise.all(triggers.splice(0).map((trigger) => trigger.close()));
});

async function serve(options: TriggerServerOptions): Promise<ServedTrigger> {
	const trigger = await serveTrigger(options);
	triggers.push(trigger);
	return trigger;
}

async function admin(method: string, path: string, body?: unknown): Promise<unknown> {
	const response = await fetch(`${sandbox.baseUrl}${path}`, {
		method,
		headers: body === undefined ? {} : { 'content-type': 'application/json' },
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	const text = await response.text();
	if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
	return text === '' ? undefined : JSON.parse(text);
}

function business() {
	const biz = sandbox.fixture.businesses[0];
	const contact = biz.contacts.find((c) => c.inWindow && !c.undeliverable);
	if (!contact) throw new Error('the fixture has no in-window contact');
	return { biz, contact };
}

async function register(trigger: ServedTrigger, headers: Record<string, string> = { [AUTH.headerName]: AUTH.secret }) {
	const { biz } = business();
	return (await admin('POST', '/__sandbox/webhooks', {
		business: biz.id,
		url: trigger.url,
		method: trigger.method,
		headers,
	})) as { id: string };
}

async function apiSend(text: string): Promise<void> {
	const { biz, contact } = business();
	const response = await fetch(`${sandbox.baseUrl}/v1/messages/send`, {
		method: 'POST',
		headers: { authorization: `Bearer ${biz.accessToken}`, 'content-type': 'application/json' },
		body: JSON.stringify({
			to: contact.phoneNumber,
			from: 'whatsapp',
			type: 'text',
			content: { text },
			channel_uuid: biz.channelUuid,
		}),
	});
	expect(response.status).toBeLessThan(300);
}

interface Delivery {
	webhookId: string;
	body?: unknown;
	statusCode?: number;
	error?: string;
}

async function deliveries(webhookId: string): Promise<Delivery[]> {
	const all = (await admin('GET', '/__sandbox/webhooks/deliveries')) as Delivery[] | { deliveries: Delivery[] };
	return (Array.isArray(all) ? all : all.deliveries).filter((d) => d.webhookId === webhookId);
}

async function waitForDeliveries(webhookId: string, count: number): Promise<Delivery[]> {
	const deadline = Date.now() + 5000;
	for (;;) {
		const found = await deliveries(webhookId);
		if (found.length >= count) return found;
		if (Date.now() > deadline) throw new Error(`expected ${count} deliveries, saw ${found.length}`);
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
}

describe('Convo Trigger receiving deliveries from the sandbox', () => {
	it('receives an inbound message and an API send, and nothing for a dashboard send', async () => {
		const { biz, contact } = business();
		const trigger = await serve({ auth: AUTH, parameters: { triggerOn: 'any' } });
		const { id } = await register(trigger);

		await admin('POST', '/__sandbox/inbound', { business: biz.id, from: contact.phoneNumber, text: 'inbound e2e' });
		await apiSend('api send e2e');
		const dashboard = (await admin('POST', '/__sandbox/dashboard-send', {
			business: biz.id,
			to: contact.phoneNumber,
			text: 'dashboard e2e',
		})) as {
			message: { text: string };
		};
		expect(dashboard.message.text).toBe('dashboard e2e');
		// A last inbound message: once it has arrived, a delivery for the dashboard send would have too.
		await admin('POST', '/__sandbox/inbound', { business: biz.id, from: contact.phoneNumber, text: 'marker e2e' });

		const executions = await trigger.waitForExecutions(3);
		const byText = new Map(executions.map((e) => [String(e.items[0].json.text), e.items[0].json]));
		expect([...byText.keys()].sort()).toEqual(['api send e2e', 'inbound e2e', 'marker e2e']);
		expect(byText.get('inbound e2e')).toEqual(expect.objectContaining({ status: 'received', channel: 'whatsapp' }));
		expect(byText.get('api send e2e')).toEqual(expect.objectContaining({ status: 'sent' }));
		expect(byText.get('inbound e2e')?.contact).toEqual(expect.objectContaining({ uuid: contact.uuid }));
		for (const execution of executions) expect(execution.items).toHaveLength(1);

		const log = await waitForDeliveries(id, 3);
		expect(log.map((d) => d.statusCode)).toEqual([200, 200, 200]);
		// The dashboard send was stored (above) but never delivered.
		expect(JSON.stringify(await deliveries(id))).not.toContain('dashboard e2e');
		expect(await deliveries(id)).toHaveLength(3);
		expect(trigger.started()).toBe(3);
		expect(trigger.webhookErrors).toEqual([]);
	});

	it('with the default status filter answers the API send with 200 and starts nothing for it', async () => {
		const { biz, contact } = business();
		const trigger = await serve({ auth: AUTH });
		const { id } = await register(trigger);
		await apiSend('api send, filtered');
		await admin('POST', '/__sandbox/inbound', { business: biz.id, from: contact.phoneNumber, text: 'inbound, kept' });
		const [execution] = await trigger.waitForExecutions(1);
		expect(execution.items[0].json.text).toBe('inbound, kept');
		expect((await waitForDeliveries(id, 2)).map((d) => d.statusCode)).toEqual([200, 200]);
		expect(trigger.started()).toBe(1);
	});

	it('ignores API sends from the business number this workflow replies from', async () => {
		const { biz, contact } = business();
		const trigger = await serve({
			auth: AUTH,
			parameters: { triggerOn: 'any', ignoreSendsFrom: biz.phoneNumbers.join(', ') },
		});
		const { id } = await register(trigger);
		await apiSend('own send');
		await admin('POST', '/__sandbox/inbound', { business: biz.id, from: contact.phoneNumber, text: 'customer' });
		await waitForDeliveries(id, 2);
		const [execution] = await trigger.waitForExecutions(1);
		expect(execution.items[0].json.text).toBe('customer');
		expect(trigger.started()).toBe(1);
	});

	it('refuses deliveries registered with a wrong secret: 401 in the delivery log, no execution', async () => {
		const { biz, contact } = business();
		const trigger = await serve({ auth: AUTH });
		const { id } = await register(trigger, { [AUTH.headerName]: 'not-the-secret' });
		await admin('POST', '/__sandbox/inbound', { business: biz.id, from: contact.phoneNumber, text: 'refused' });
		const [attempt] = await waitForDeliveries(id, 1);
		expect(attempt.statusCode).toBe(401);
		expect(trigger.started()).toBe(0);
	});

	it('is delivered with PUT when the trigger and the registration say PUT', async () => {
		const { biz, contact } = business();
		const trigger = await serve({ auth: AUTH, parameters: { httpMethod: 'PUT' } });
		await register(trigger);
		await admin('POST', '/__sandbox/inbound', { business: biz.id, from: contact.phoneNumber, text: 'via PUT' });
		const [execution] = await trigger.waitForExecutions(1);
		expect(execution.items[0].json.text).toBe('via PUT');
	});
});
