/** A valid request for every operation, built from the fixture (business 0). */
import type { OperationKey } from 'convo-contract';
import { contactOf, digits, textMessage, type CallInput, type SandboxTestContext } from './support';

export function validInputs(context: SandboxTestContext): Record<OperationKey, CallInput> {
	const business = context.business;
	const contact = contactOf(business, { inWindow: true });
	const positional = business.templates.find((template) => template.kind === 'positional')!;
	const agent = business.agents[0];
	return {
		getMessageStatus: { params: { uuid: '11111111-1111-4111-8111-111111111111' } },
		sendMessage: { body: textMessage(business, contact.phoneNumber) },
		upsertSearchItem: { body: { collection_id: business.collections[0].id, external_id: 'x-1', item: { title: 'T' } } },
		listSearchItems: { query: { collection_id: business.collections[0].id } },
		updateContact: { params: { uuid: contact.uuid }, body: { tags: ['a'] } },
		getContactMessages: { params: { uuid: contact.uuid } },
		closeContactConversations: { params: { uuid: contact.uuid } },
		openContactConversations: { params: { uuid: contact.uuid } },
		getConversation: { query: { phone: digits(contact.phoneNumber) } },
		sendTemplate: {
			query: { template_id: positional.id, from_phone_number: business.phoneNumbers[0] },
			body: { phone: digits(contact.phoneNumber), 1: 'Ada', 2: 'A-1' },
		},
		createAgent: { body: { agent: { name: 'Bot', system_prompt: 'Be kind' } } },
		getAgent: { params: { agent_id: agent.id } },
		updateAgent: { params: { agent_id: agent.id }, body: { agent: { prompt_config: { tone_prompt: 'Calm' } } } },
		updateAgentPut: { params: { agent_id: agent.id }, body: { agent: { prompt_config: { tone_prompt: 'Calm' } } } },
	};
}
