import type { IDataObject } from 'n8n-workflow';

import { badCredentials, external, runConvo, shownError, useSandbox, fieldLabel } from './support';

const UNKNOWN = '00000000-0000-4000-8000-00000000a404';

describe('Convo node: Agent', () => {
	const context = useSandbox();
	const stored = async (id: string) =>
		(await external<{ agent: IDataObject }>(context, 'GET', `/agents/${id}`)).body.agent;

	it('creates an agent with handoff to human control', async () => {
		const result = await runConvo(
			context,
			{
				resource: 'agent',
				operation: 'create',
				name: '={{ $json.name }}',
				systemPrompt: 'You answer questions about orders.',
				tools: { handoffEnabled: true, handoffInstructions: 'Hand over when asked for a refund' },
			},
			{ items: [{ name: 'Order helper' }] },
		);
		expect(result.errorOf('Convo')).toBeUndefined();
		const agent = result.json[0];
		expect(agent).toMatchObject({
			id: expect.any(String),
			name: 'Order helper',
			type: 'BASIC',
			business_id: context.business.id,
		});
		expect((await stored(agent.id as string)).tools).toMatchObject({
			handoff_to_human_control: { enabled: true, instructions: 'Hand over when asked for a refund' },
		});
	});

	it('gets an agent, raw when Simplify is off', async () => {
		const id = context.business.agents[0].id;
		const result = await runConvo(context, { resource: 'agent', operation: 'get', agentId: id, simplify: false });
		expect(result.json[0]).toMatchObject({ agent: { id }, business_id: context.business.id });
	});

	it('updates an agent: merges prompt config and tools, keeps what was not sent', async () => {
		const id = context.business.agents[0].id;
		await runConvo(context, {
			resource: 'agent',
			operation: 'update',
			agentId: id,
			updateFields: {
				promptConfig: '{"tone_prompt":"formal"}',
				toolsJson: '{"handoff_to_human_control":{"enabled":false,"instructions":"never"}}',
			},
		});
		const result = await runConvo(context, {
			resource: 'agent',
			operation: 'update',
			agentId: id,
			updateFields: {
				name: 'Renamed',
				systemPrompt: 'You answer in German.',
				promptConfig: '={{ { language_prompt: "German" } }}',
				handoffEnabled: true,
			},
		});
		expect(result.errorOf('Convo')).toBeUndefined();
		const agent = await stored(id);
		expect(agent.name).toBe('Renamed');
		expect(agent.system_prompt).toBe('You answer in German.');
		expect(agent.prompt_config).toMatchObject({ tone_prompt: 'formal', language_prompt: 'German' });
		expect(agent.tools).toMatchObject({ handoff_to_human_control: { enabled: true, instructions: 'never' } });
	});

	it('says the agent belongs to another business', async () => {
		const result = await runConvo(context, {
			resource: 'agent',
			operation: 'get',
			agentId: context.other.agents[0].id,
		});
		expect(shownError(result)).toContain('This agent belongs to another business (403)');
	});

	it('names an agent that does not exist (404), refuses a bad id before sending, and names the credential (401)', async () => {
		const missing = await runConvo(context, { resource: 'agent', operation: 'get', agentId: UNKNOWN });
		expect(shownError(missing)).toContain(`No agent with ${fieldLabel('agent', 'get', 'agentId')} ${UNKNOWN} (404)`);
		const bad = await runConvo(context, {
			resource: 'agent',
			operation: 'update',
			agentId: 'agent-1',
			updateFields: { name: 'x' },
		});
		expect(shownError(bad)).toContain(`${fieldLabel('agent', 'get', 'agentId')} must be a UUID`);
		const refused = await runConvo(
			context,
			{ resource: 'agent', operation: 'create', name: 'x', systemPrompt: 'y' },
			{ credentials: badCredentials(context) },
		);
		expect(shownError(refused)).toContain('Check the API key in the Convo External API credential');
	});
});
