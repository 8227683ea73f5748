/**
 * examples/ run as they are, through n8n-core (the engine n8n runs), against the sandbox: what
 * n8n-core can run is run here, node for node. What needs n8n itself (the AI Agent and its
 * OpenAI Chat Model are @n8n/n8n-nodes-langchain nodes; Code, Schedule Trigger and Summarize are
 * n8n-nodes-base nodes) runs in the end-to-end suite (test/e2e), in a real n8n.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { startSandbox, type RunningSandbox } from '../../sandbox/src';
import { serveTrigger, type ServedTrigger } from '../harness/webhook';
import { eventually } from '../sandbox/support';
import { runWorkflow, type RunResult, type WorkflowJson } from '../harness/workflow';

const examplesDir = join(__dirname, '..', '..', 'examples');
const load = (file: string) =>
	JSON.parse(readFileSync(join(examplesDir, file), 'utf8')) as WorkflowJson & { id: string };
const exampleFiles = () => readdirSync(examplesDir).filter((name) => name.endsWith('.json'));

/** Credential types an example may reference: the pack's own and n8n's OpenAI one. */
const KNOWN_CREDENTIAL_TYPES = ['convoApi', 'convoExternalApi', 'convoTriggerApi', 'convoRunnerApi', 'openAiApi'];
const ADA = { uuid: 'e6f0ff4e-d05a-4b3b-8bc7-07926a34b432', phone: '+4915112340001', digits: '4915112340001' };

describe('examples/ run as they are against the sandbox', () => {
	let sandbox: RunningSandbox;
	const credentials = () => {
		const business = sandbox.fixture.businesses[0];
		return {
			convoApi: { baseUrl: sandbox.baseUrl, accessToken: business.accessToken },
			convoExternalApi: { externalUrl: sandbox.externalUrl, apiKey: business.apiKey },
		};
	};
	const run = async (file: string): Promise<RunResult> => await runWorkflow(load(file), { credentials: credentials() });
	const admin = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
		const response = await fetch(`${sandbox.baseUrl}/__sandbox/${path}`, {
			method,
			headers: body === undefined ? {} : { 'content-type': 'application/json' },
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
		return (await response.json()) as T;
	};
	const external = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
		const response = await fetch(`${sandbox.externalUrl}${path}`, {
			method,
			headers: {
				'x-api-key': sandbox.fixture.businesses[0].apiKey,
				...(body === undefined ? {} : { 'content-type': 'application/json' }),
			},
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
		return (await response.json()) as T;
	};
	const messages = async () =>
		await admin<Array<{ to: string; text: string; source?: string }>>(
			'GET',
			`messages?business=${sandbox.fixture.businesses[0].id}`,
		);

	beforeAll(async () => {
		sandbox = await startSandbox({ port: 0 });
	});
	afterAll(async () => await sandbox.close());
	beforeEach(async () => {
		await fetch(`${sandbox.baseUrl}/__sandbox/reset`, { method: 'POST' });
	});

	test('every example is importable n8n JSON: a unique 16-character id, Convo nodes by their package type, credentials by type', () => {
		const files = exampleFiles();
		expect(files.length).toBeGreaterThanOrEqual(8);
		const ids = new Set<string>();
		for (const file of files) {
			const workflow = load(file);
			expect(workflow.id).toHaveLength(16);
			expect(ids.has(workflow.id)).toBe(false);
			ids.add(workflow.id);
			expect(workflow.nodes.some((node) => node.type.startsWith('n8n-nodes-convo.'))).toBe(true);
			for (const node of workflow.nodes) {
				expect(node.type).not.toMatch(/^CUSTOM\./);
				for (const type of Object.keys(node.credentials ?? {})) expect(KNOWN_CREDENTIAL_TYPES).toContain(type);
			}
			// Every connection names a node of the workflow.
			const names = new Set(workflow.nodes.map((node) => node.name));
			for (const [from, byType] of Object.entries(workflow.connections)) {
				expect(names.has(from)).toBe(true);
				for (const outputs of Object.values(byType))
					for (const list of outputs ?? []) for (const target of list ?? []) expect(names.has(target.node)).toBe(true);
			}
		}
	});

	test('the README describes every example by its file name', () => {
		const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
		for (const file of exampleFiles()) expect(readme).toContain(`examples/${file}`);
	});

	test('send-order-update-template sends the template once, with its variables filled', async () => {
		const result = await run('send-order-update-template.json');
		expect(result.errorOf('Send order update')).toBeUndefined();
		expect(result.outputOf('Send order update')[0].json).toMatchObject({
			messageId: expect.any(String),
			success: true,
			templateName: 'order_update',
		});
		const sent = await messages();
		expect(sent).toHaveLength(1);
		expect(sent[0].to).toBe(ADA.digits);
		expect(sent[0].text).toContain('Ada');
		expect(sent[0].text).toContain('A-100');
	});

	test('tag-and-close-conversation replaces the tags, then closes the conversation of the contact it returned', async () => {
		await external('PATCH', `/contacts/${ADA.uuid}`, { tags: ['stale'] });
		const result = await run('tag-and-close-conversation.json');
		expect(result.errorOf('Tag as VIP')).toBeUndefined();
		expect(result.errorOf('Close conversation')).toBeUndefined();
		expect(result.outputOf('Tag as VIP')[0].json).toMatchObject({
			uuid: ADA.uuid,
			tags: ['vip', 'gold'],
			closedAt: null,
		});
		// What the service holds now (an empty PATCH changes nothing and answers the contact).
		const { contact } = await external<{ contact: Array<{ tags: string[]; closedAt: string | null }> }>(
			'PATCH',
			`/contacts/${ADA.uuid}`,
			{},
		);
		expect(contact[0].tags).toEqual(['vip', 'gold']);
		expect(contact[0].closedAt).toEqual(expect.any(String));
	});

	test('agent-with-handoff creates an agent with handoff to a human, then updates its tools', async () => {
		const result = await run('agent-with-handoff.json');
		expect(result.errorOf('Create agent')).toBeUndefined();
		expect(result.errorOf('Update its tools')).toBeUndefined();
		const created = result.outputOf('Create agent')[0].json as { id: string; name: string };
		expect(created.name).toBe('Order helper');
		const { agent } = await external<{
			agent: { id: string; name: string; tools: Record<string, { enabled: boolean; instructions: string }> };
		}>('GET', `/agents/${created.id}`);
		expect(agent.tools.handoff_to_human_control).toMatchObject({
			enabled: true,
			instructions: expect.stringContaining('asks for a refund'),
		});
		expect(agent.name).toBe('Order helper');
	});

	describe('reply-to-inbound-message, its Convo Trigger served over HTTP and called by the sandbox', () => {
		let served: ServedTrigger | undefined;
		afterEach(async () => await served?.close());

		test('an inbound message gets one reply that quotes it, and the reply starts nothing', async () => {
			served = await serveTrigger({ workflow: load('reply-to-inbound-message.json'), credentials: credentials() });
			const business = sandbox.fixture.businesses[0];
			const { id: webhookId } = await admin<{ id: string }>('POST', 'webhooks', {
				business: business.id,
				url: served.url,
				method: served.method,
			});
			await admin('POST', 'inbound', { business: business.id, from: ADA.phone, text: 'Where is my order A-100?' });

			const [execution] = await served.waitForExecutions(1, 15_000);
			const runData = execution.run.data.resultData;
			expect(runData.error).toBeUndefined();
			expect(runData.runData['Send reply']?.[0]?.data?.main?.[0]?.[0]?.json).toMatchObject({
				messageId: expect.any(String),
			});
			const replies = (await messages()).filter((message) => message.to === ADA.digits);
			expect(replies).toHaveLength(1);
			expect(replies[0].text).toContain('Hi Ada');
			expect(replies[0].text).toContain('"Where is my order A-100?"');
			// The reply is a message_created (status sent) the trigger filters out: still one execution,
			// once the sandbox has logged the reply's delivery (it logs an attempt after the answer, and
			// the trigger counts a start before it answers).
			const delivered = await eventually(async () => {
				const log = await admin<
					Array<{ webhookId: string; statusCode?: number; body: { payload: { text?: string } } }>
				>('GET', 'webhooks/deliveries');
				return log.find((attempt) => attempt.webhookId === webhookId && attempt.body.payload.text === replies[0].text);
			}, 15_000);
			expect(delivered.statusCode).toBe(200);
			expect(served.started()).toBe(1);
		});
	});
});
