import type { INodeProperties, INodePropertyCollection, INodePropertyMode, INodePropertyOptions } from 'n8n-workflow';

import codex from '../../nodes/Convo/Convo.node.json';
import { Convo } from '../../nodes/Convo/Convo.node';
import { convoNode, itemsThen, runWorkflow } from '../harness/workflow';

const convo = new Convo();
const description = convo.getNodeType(1).description;

/** Every field, nested collection and fixedCollection fields included, with its path. */
function allFields(properties: INodeProperties[], path = ''): Array<[string, INodeProperties]> {
	return properties.flatMap((property) => {
		const here = `${path}${property.name}`;
		const nested = (property.options ?? []).flatMap((option) => {
			if ('values' in option) return allFields((option as INodePropertyCollection).values, `${here}.${option.name}.`);
			if ('type' in option) return allFields([option as INodeProperties], `${here}.`);
			return [];
		});
		return [[here, property] as [string, INodeProperties], ...nested];
	});
}

describe('Convo node description', () => {
	it('describes every field so that a person or a model can fill it', () => {
		const undescribed = allFields(description.properties)
			.filter(([, field]) => !['resource', 'operation'].includes(field.name) && field.type !== 'notice')
			.filter(([, field]) => !field.description || field.description.trim().length < 10)
			.map(([path]) => path);
		expect(undescribed).toEqual([]);
		expect(description.usableAsTool).toBe(true);
		expect(codex.categories).toContain('Communication');
	});

	it('offers every operation of issue 4, each with an action a tool user reads', () => {
		const operations = description.properties
			.filter((field) => field.name === 'operation')
			.flatMap((field) =>
				(field.options as INodePropertyOptions[]).map((option) => {
					expect(option.action).toEqual(expect.any(String));
					return `${String(field.displayOptions?.show?.resource)}.${String(option.value)}`;
				}),
			);
		expect(operations.sort()).toEqual(
			[
				'message.send',
				'message.getStatus',
				'template.send',
				'contact.update',
				'contact.getMessages',
				'contact.closeConversations',
				'contact.reopenConversations',
				'conversation.get',
				'searchItem.upsert',
				'searchItem.getAll',
				'agent.create',
				'agent.get',
				'agent.update',
			].sort(),
		);
	});

	it('shows a field only for the operation it belongs to', () => {
		for (const field of description.properties) {
			if (['resource', 'batching'].includes(field.name)) continue;
			expect(field.displayOptions?.show?.resource).toBeDefined();
		}
	});

	it('runs an operation every router entry knows (an unknown one fails clearly)', async () => {
		const result = await runWorkflow(itemsThen([{}], convoNode({ resource: 'message', operation: 'delete' })), {
			credentials: { convoApi: { baseUrl: 'http://127.0.0.1:9', accessToken: 'x' } },
		});
		expect(result.errorOf('Convo')?.message).toContain('The operation "delete" is not known for "message"');
	});

	describe('identifier fields', () => {
		const identifiers = allFields(description.properties).filter(([, field]) => / ID$/.test(field.displayName) && field.name !== 'externalId');
		const mode = (field: INodeProperties, name: string) => field.modes?.find((m) => m.name === name) as INodePropertyMode;
		const regexOf = (m: INodePropertyMode) => new RegExp((m.validation?.[0] as unknown as { properties: { regex: string } }).properties.regex);
		const UUID = '9b2d6e0a-4c1f-4e8b-a3d2-5f7c1e9b0a64';

		it('say "ID", never "UUID", in every label', () => {
			expect(allFields(description.properties).filter(([, field]) => /UUID/.test(field.displayName))).toEqual([]);
			expect([...new Set(identifiers.map(([path]) => path))].sort()).toEqual(
				[
					'additionalFields.agentId',
					'additionalFields.teamUuid',
					'agentId',
					'channelUuid',
					'collectionId',
					'contactUuid',
					'messageUuid',
					'templateId',
					'templateUuid',
				].sort(),
			);
		});

		it('are resource locators whose By ID mode refuses a non-UUID in the editor and which say where to find the id', () => {
			for (const [path, field] of identifiers) {
				expect([path, field.type]).toEqual([path, 'resourceLocator']);
				expect(field.default).toEqual({ mode: 'id', value: '' });
				const byId = mode(field, 'id');
				expect(byId.displayName).toBe('By ID');
				expect(regexOf(byId).test(UUID)).toBe(true);
				expect(regexOf(byId).test('agent-1')).toBe(false);
				expect(regexOf(byId).test(`${UUID}x`)).toBe(false);
				expect(field.description).toMatch(/ID/);
			}
		});

		it('take a contact by its dashboard link (href) and extract the id', () => {
			const contacts = identifiers.filter(([path]) => path === 'contactUuid');
			expect(contacts).toHaveLength(4);
			const [, contact] = contacts[0];
			for (const [, other] of contacts) expect(other.modes).toEqual(contact.modes);
			const byUrl = mode(contact, 'url');
			const link = `http://127.0.0.1:4010/dashboard/contacts/${UUID}`;
			expect(regexOf(byUrl).test(link)).toBe(true);
			expect(regexOf(byUrl).test(`http://127.0.0.1:4010/dashboard/conversations/${UUID}`)).toBe(false);
			const extract = byUrl.extractValue as { type: string; regex: string };
			expect(new RegExp(extract.regex).exec(link)?.[1]).toBe(UUID);
			// Only contacts have dashboard links in the service's answers.
			expect(new Set(identifiers.filter(([, field]) => mode(field, 'url')).map(([path]) => path))).toEqual(new Set(['contactUuid']));
		});
	});
});
