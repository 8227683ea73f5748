/**
 * The Convo Runner Trigger served over real HTTP the way n8n serves a production webhook, against
 * a real `convo-runner start` (its own redis-server, the sandbox): activation registers the
 * trigger's URL at the runner, a finished campaign starts the workflow once with a valid
 * signature, forged / stale / unsigned deliveries get 401 and start nothing, deactivation removes
 * the registration. Registrations and executions are counted at the runner and the harness.
 */
import type { IDataObject } from 'n8n-workflow';

import { signDelivery, SIGNATURE_HEADER } from 'convo-contract';
import { countFailure } from '../../runner/src/webhooks/store';
import { serveTrigger, type ServedTrigger } from '../harness/webhook';
import { positionalTemplate, startApi, useRunnerUnderTest, waitFor, waitForEventsDelivered } from '../runner/support';

jest.setTimeout(180_000);

const TOKEN = 'trigger-test-token-0123456789abcdef';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN });
let base = '';
let served: ServedTrigger;

beforeAll(async () => {
	base = await startApi(runner);
	served = await serveTrigger({
		type: 'n8n-nodes-convo.convoRunnerTrigger',
		parameters: { events: ['campaign.finished', 'reindex.finished'] },
		credentials: { convoRunnerApi: { runnerUrl: base, token: TOKEN } },
	});
});
afterAll(async () => {
	await served?.close();
});

async function api<T = IDataObject>(
	method: string,
	path: string,
	body?: unknown,
): Promise<{ status: number; json: T }> {
	const response = await fetch(`${base}${path}`, {
		method,
		headers: {
			authorization: `Bearer ${TOKEN}`,
			...(body === undefined ? {} : { 'content-type': 'application/json' }),
		},
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	const text = await response.text();
	return { status: response.status, json: (text === '' ? undefined : JSON.parse(text)) as T };
}

const registered = async () => (await api<{ webhooks: IDataObject[] }>('GET', '/api/webhooks')).json.webhooks;

async function deliver(body: string, signature: string | undefined): Promise<number> {
	const response = await fetch(served.url, {
		method: 'POST',
		headers: {
			'content-type': 'application/json',
			...(signature === undefined ? {} : { [SIGNATURE_HEADER]: signature }),
		},
		body,
	});
	await response.text();
	return response.status;
}

const fakeEvent = (type = 'campaign.finished', id = `evt_${Date.now()}`) =>
	JSON.stringify({ id, type, created_at: new Date().toISOString(), data: { id: 'c1', state: 'completed' } });

describe('Convo Runner Trigger', () => {
	it('activation registers its URL and events at the runner, keeping id and secret in static data', async () => {
		await served.activate();
		const data = served.staticData();
		expect(data.webhookId).toEqual(expect.any(String));
		expect(data.webhookSecret).toEqual(expect.any(String));
		const hooks = await registered();
		expect(hooks).toHaveLength(1);
		expect(hooks[0]).toMatchObject({ id: data.webhookId, url: served.url });
		expect((hooks[0].events as string[]).sort()).toEqual(['campaign.finished', 'reindex.finished']);
		expect(JSON.stringify(hooks)).not.toContain(String(data.webhookSecret));
		expect((await api('GET', `/api/webhooks/${String(data.webhookId)}`)).status).toBe(200);

		// Publishing again finds the registration and makes no second one.
		await served.activate();
		expect(served.staticData().webhookId).toBe(data.webhookId);
		expect(await registered()).toHaveLength(1);
	});

	it('a finished campaign starts the workflow exactly once, with the signed event', async () => {
		const business = runner.business;
		const created = await api('POST', '/api/campaigns', {
			template_id: positionalTemplate(business).id,
			from: business.phoneNumbers[0],
			rate: 50,
			recipients: [0, 1, 2].map((i) => ({ phone: `+4917399000${i}`, 1: `N${i}`, 2: `#${i}` })),
		});
		expect(created.status).toBe(201);
		const campaignId = String(created.json.id);
		const [execution] = await served.waitForExecutions(1, 90_000);
		expect(execution.items).toHaveLength(1);
		expect(execution.items[0].json).toMatchObject({
			type: 'campaign.finished',
			id: expect.any(String),
			created_at: expect.any(String),
			data: { id: campaignId, state: 'completed', counts: { sent: 3 } },
		});
		// The runner delivers once per transition: no second execution follows once every event it
		// emitted has had every delivery attempt it will get (the harness counts a start before it answers).
		await waitForEventsDelivered(runner.context);
		expect(served.started()).toBe(1);
		expect(served.webhookErrors).toEqual([]);
	});

	it('a test event the runner sends is answered 2xx and starts nothing', async () => {
		const id = String(served.staticData().webhookId);
		const before = served.started();
		const sent = await api<{ delivery_id: string; queued: boolean }>('POST', `/api/webhooks/${id}/test`);
		expect(sent).toMatchObject({ status: 202, json: { queued: true } });
		await waitForEventsDelivered(runner.context);
		const noted = await api<{ deliveries: IDataObject[] }>('GET', `/api/webhooks/${id}/deliveries`);
		expect(noted.json.deliveries[0]).toMatchObject({
			id: sent.json.delivery_id,
			type: 'webhook.test',
			outcome: 'delivered',
			status: 200,
		});
		expect(served.started()).toBe(before);
		expect(served.webhookErrors).toEqual([]);
	});

	it('a forged, stale or missing signature gets 401 and starts nothing; a good one for an unselected event is ignored', async () => {
		const secret = String(served.staticData().webhookSecret);
		const before = served.started();
		const body = fakeEvent();
		expect(await deliver(body, undefined)).toBe(401);
		expect(await deliver(body, signDelivery('not-the-secret', body))).toBe(401);
		expect(await deliver(body, signDelivery(secret, `${body} `))).toBe(401);
		expect(await deliver(body, signDelivery(secret, body, Math.floor(Date.now() / 1000) - 600))).toBe(401);
		expect(await deliver(body, 'v1=deadbeef')).toBe(401);
		expect(served.started()).toBe(before);

		const paused = fakeEvent('campaign.paused');
		expect(await deliver(paused, signDelivery(secret, paused))).toBe(200);
		expect(served.started()).toBe(before);

		// The same secret over the same bytes passes (the check is not refusing everything), once per event id.
		expect(await deliver(body, signDelivery(secret, body))).toBe(200);
		expect(await deliver(body, signDelivery(secret, body))).toBe(200);
		expect(served.started()).toBe(before + 1);
	});

	it('deactivation removes the registration; a registration gone at the runner is made again on activation', async () => {
		const id = String(served.staticData().webhookId);
		expect(await served.deactivate()).toBe(true);
		expect((await api('GET', `/api/webhooks/${id}`)).status).toBe(404);
		expect(await registered()).toEqual([]);
		expect(served.staticData().webhookSecret).toBeUndefined();
		// Unregistered, it refuses even a delivery signed with the old secret's shape.
		const body = fakeEvent();
		expect(await deliver(body, signDelivery('anything', body))).toBe(401);

		await served.activate();
		const again = String(served.staticData().webhookId);
		expect((await api('DELETE', `/api/webhooks/${again}`)).status).toBe(204);
		await served.activate();
		expect(served.staticData().webhookId).not.toBe(again);
		expect(await registered()).toHaveLength(1);
		expect(await served.deactivate()).toBe(true);
		// A second deactivation (already gone) is fine.
		expect(await served.deactivate()).toBe(true);
		await waitFor('no registration left', async () => (await registered()).length === 0, 5000);
	});

	it('a registration the runner disabled after failed deliveries is replaced on the next activation', async () => {
		await served.activate();
		const id = String(served.staticData().webhookId);
		// The runner's own path for a delivery that failed, as many times in a row as disable it.
		for (let i = 0; i < runner.context.config.RUNNER_WEBHOOK_DISABLE_AFTER; i++) await countFailure(runner.context, id);
		expect((await api('GET', `/api/webhooks/${id}`)).json.disabled_at).toEqual(expect.any(String));
		await served.activate();
		const replaced = String(served.staticData().webhookId);
		expect(replaced).not.toBe(id);
		expect((await api('GET', `/api/webhooks/${id}`)).status).toBe(404);
		const hooks = await registered();
		expect(hooks.map((hook) => [hook.id, hook.disabled_at])).toEqual([[replaced, undefined]]);
		expect(await served.deactivate()).toBe(true);
	});
});
