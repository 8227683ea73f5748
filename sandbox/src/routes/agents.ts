/** Agents (SPEC B9 to B11). PUT behaves as PATCH. */
import type { FastifyInstance } from 'fastify';

import { AGENT_MERGED_FIELDS } from 'convo-contract';
import type { SandboxContext } from '../context';
import { newUuid } from '../ids';
import { deepMerge, dropNulls, withoutToolDescriptions, type JsonObject } from '../merge';
import type { AgentRecord, Business } from '../model';
import { agentView, createdAgentView } from '../views';
import { defineOperation } from './operation';
import { ownedByBusiness } from './ownership';

export function agentRoutes(app: FastifyInstance, context: SandboxContext): void {
	const { store, clock } = context;

	defineOperation(app, context, 'createAgent', (business, { body }) => {
		// business_id comes from the key; the contract already dropped one sent in the body.
		const now = clock.iso();
		const agent: AgentRecord = {
			id: newUuid(),
			businessId: business.id,
			fields: {
				name: body.agent.name,
				type: 'BASIC',
				system_prompt: body.agent.system_prompt,
				prompt_config: {},
				tools: withoutToolDescriptions(structuredClone((body.agent.tools ?? {}) as JsonObject)),
				data: {},
				activation_rules: {},
				follow_up_settings: {},
				inactivity_run_settings: {},
				provider: 'openai',
				model: 'gpt-4o-mini',
				created_at: now,
				updated_at: now,
			},
		};
		store.agents.set(agent.id, agent);
		return createdAgentView(agent);
	});

	const findAgent = (business: Business, id: string) =>
		ownedByBusiness(business, store.agents.get(id), 'agent', 'agent_id', id);

	defineOperation(app, context, 'getAgent', (business, { params }) => agentView(findAgent(business, params.agent_id)));

	const mergeIntoAgent = (business: Business, id: string, patch: JsonObject) => {
		const agent = findAgent(business, id);
		const changes = dropNulls(patch);
		if (typeof changes.name === 'string') agent.fields.name = changes.name;
		if (typeof changes.system_prompt === 'string') agent.fields.system_prompt = changes.system_prompt;
		for (const field of AGENT_MERGED_FIELDS) {
			const value = changes[field];
			if (value === undefined) continue;
			const incoming = field === 'tools' ? withoutToolDescriptions(value as JsonObject) : (value as JsonObject);
			agent.fields[field] = deepMerge(agent.fields[field], incoming);
		}
		agent.fields.updated_at = clock.iso();
		return agentView(agent);
	};

	defineOperation(app, context, 'updateAgent', (business, { params, body }) =>
		mergeIntoAgent(business, params.agent_id, body.agent as JsonObject),
	);
	defineOperation(app, context, 'updateAgentPut', (business, { params, body }) =>
		mergeIntoAgent(business, params.agent_id, body.agent as JsonObject),
	);
}
