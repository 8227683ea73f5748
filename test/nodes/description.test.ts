import type { INodeProperties, INodePropertyCollection, INodePropertyOptions } from 'n8n-workflow';

import codex from '../../nodes/Convo/Convo.node.json';
import { Convo } from '../../nodes/Convo/Convo.node';
import { convoNode, itemsThen, runWorkflow } from '../harness/workflow';

const description = new Convo().description;

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
});
