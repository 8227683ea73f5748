import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { startSandbox, type RunningSandbox } from '../../sandbox/src';
import { runWorkflow, type RunResult, type WorkflowJson } from '../harness/workflow';

const examplesDir = join(__dirname, '..', '..', 'examples');
const load = (file: string) => JSON.parse(readFileSync(join(examplesDir, file), 'utf8')) as WorkflowJson & { id: string };

describe('examples/ run as they are against the sandbox', () => {
	let sandbox: RunningSandbox;
	const run = async (file: string): Promise<RunResult> => {
		const business = sandbox.fixture.businesses[0];
		return await runWorkflow(load(file), {
			credentials: { convoExternalApi: { externalUrl: sandbox.externalUrl, apiKey: business.apiKey } },
		});
	};

	beforeAll(async () => {
		sandbox = await startSandbox({ port: 0 });
	});
	afterAll(async () => await sandbox.close());
	beforeEach(async () => {
		await fetch(`${sandbox.baseUrl}/__sandbox/reset`, { method: 'POST' });
	});

	test('every example is importable n8n JSON: a 16-character id, Convo nodes by their package type', () => {
		const files = readdirSync(examplesDir).filter((name) => name.endsWith('.json'));
		expect(files.length).toBeGreaterThanOrEqual(2);
		for (const file of files) {
			const workflow = load(file);
			expect(workflow.id).toHaveLength(16);
			expect(workflow.nodes.some((node) => node.type === 'n8n-nodes-convo.convo')).toBe(true);
		}
	});

	test('send-order-update-template sends the template once, with its variables filled', async () => {
		const result = await run('send-order-update-template.json');
		expect(result.errorOf('Send order update')).toBeUndefined();
		expect(result.outputOf('Send order update')[0].json).toMatchObject({ messageId: expect.any(String), success: true, templateName: 'order_update' });
		const business = sandbox.fixture.businesses[0];
		const messages = (await (await fetch(`${sandbox.baseUrl}/__sandbox/messages?business=${business.id}`)).json()) as Array<{
			to: string;
			text: string;
		}>;
		expect(messages).toHaveLength(1);
		expect(messages[0].to).toBe('4915112340001');
		expect(messages[0].text).toContain('Ada');
		expect(messages[0].text).toContain('A-100');
	});

	test('tag-contact-and-read-conversation replaces the tags, then finds the conversation by the phone it returned', async () => {
		const result = await run('tag-contact-and-read-conversation.json');
		expect(result.errorOf('Tag as VIP')).toBeUndefined();
		expect(result.outputOf('Tag as VIP')[0].json).toMatchObject({ tags: ['vip', 'gold'] });
		const conversation = result.outputOf('Read conversation')[0].json as { contact: { id: string } };
		expect(conversation.contact.id).toBe('e6f0ff4e-d05a-4b3b-8bc7-07926a34b432');
	});
});
