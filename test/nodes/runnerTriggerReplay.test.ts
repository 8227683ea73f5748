/**
 * The Convo Runner Trigger's replay guard across n8n processes (#17 item 14): two copies of the
 * trigger, each loaded in a module registry of its own (what two n8n webhook processes, or one
 * before and after a restart, are: nothing in memory shared), serve the same workflow with the
 * same static data (n8n keeps it with the workflow) against a real `convo-runner start`. The same
 * signed delivery sent to both starts the workflow once, counted by executions started.
 */
import type { INodeType } from 'n8n-workflow';

import { signDelivery, SIGNATURE_HEADER } from 'convo-contract';
import { serveTrigger, type ServedTrigger } from '../harness/webhook';
import { nodeTypes } from '../harness/workflow';
import { startApi, useRunnerUnderTest } from '../runner/support';

jest.setTimeout(120_000);

const TOKEN = 'replay-test-token-0123456789abcdef';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN });
let first: ServedTrigger;
let second: ServedTrigger;

const TRIGGER_MODULE = '../../packages/n8n-nodes-convo/nodes/ConvoRunnerTrigger/ConvoRunnerTrigger.node';
type TriggerModule = typeof import('../../packages/n8n-nodes-convo/nodes/ConvoRunnerTrigger/ConvoRunnerTrigger.node');

/** The trigger as another n8n process loads it: a fresh copy of its module. */
function triggerOfAnotherProcess(): INodeType {
	let type: INodeType | undefined;
	jest.isolateModules(() => {
		// eslint-disable-next-line @typescript-eslint/no-require-imports
		const { ConvoRunnerTrigger } = require(TRIGGER_MODULE) as TriggerModule;
		type = new ConvoRunnerTrigger();
	});
	return type as INodeType;
}

beforeAll(async () => {
	const base = await startApi(runner);
	const credentials = { convoRunnerApi: { runnerUrl: base, token: TOKEN } };
	const parameters = { events: ['campaign.finished'] };
	first = await serveTrigger({ type: 'n8n-nodes-convo.convoRunnerTrigger', parameters, credentials });
	// n8n names a community node CUSTOM.<name> too; here that name serves the second process's copy.
	nodeTypes.register(triggerOfAnotherProcess(), 'CUSTOM.convoRunnerTrigger');
	second = await serveTrigger({ type: 'CUSTOM.convoRunnerTrigger', parameters, credentials });
	await first.activate();
	// The workflow's static data is stored with the workflow: every process reads the same.
	Object.assign(second.staticData(), first.staticData());
});
afterAll(async () => {
	await first?.close();
	await second?.close();
});

async function deliver(url: string, body: string, signature: string): Promise<number> {
	const response = await fetch(url, {
		method: 'POST',
		headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signature },
		body,
	});
	await response.text();
	return response.status;
}

const eventBody = (id: string) =>
	JSON.stringify({
		id,
		type: 'campaign.finished',
		created_at: new Date().toISOString(),
		data: { id: 'c1', state: 'completed' },
	});

test('the same signed delivery received by two n8n processes (or before and after a restart) starts the workflow once; another event starts it again', async () => {
	const secret = String(first.staticData().webhookSecret);
	const body = eventBody('ev-c1-replayed-1');
	const signature = signDelivery(secret, body);
	expect(await deliver(first.url, body, signature)).toBe(200);
	expect(await deliver(second.url, body, signature)).toBe(200);
	expect(await deliver(first.url, body, signature)).toBe(200);

	// Both at once, as two webhook processes behind a load balancer receive a retried delivery.
	const both = eventBody('ev-c1-replayed-2');
	const bothSignature = signDelivery(secret, both);
	expect(
		await Promise.all([deliver(first.url, both, bothSignature), deliver(second.url, both, bothSignature)]),
	).toEqual([200, 200]);

	expect(first.started() + second.started()).toBe(2);
	expect(first.webhookErrors.concat(second.webhookErrors)).toEqual([]);

	// A new event still starts it, in whichever process receives it.
	const next = eventBody('ev-c1-next');
	expect(await deliver(second.url, next, signDelivery(secret, next))).toBe(200);
	expect(first.started() + second.started()).toBe(3);
});
