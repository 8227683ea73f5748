import type { INodeProperties, INodePropertyCollection, INodePropertyOptions } from 'n8n-workflow';

import codex from '../../nodes/Convo/Convo.node.json';
import { Convo } from '../../nodes/Convo/Convo.node';
import { resources } from '../../nodes/Convo/actions/router';
import { convoNode, itemsThen, runWorkflow } from '../harness/workflow';
import { useSandbox } from './support';

const description = new Convo().description;

/** A placeholder for every required field of one operation, so n8n runs the node instead of listing issues. */
function requiredValues(resource: string, operation: string): Record<string, unknown> {
	const placeholder = '00000000-0000-0000-0000-000000000000';
	const fields = description.properties.filter(
		(field) =>
			field.required &&
			field.displayOptions?.show?.resource?.includes(resource) &&
			field.displayOptions?.show?.operation?.includes(operation),
	);
	return Object.fromEntries(
		fields.map((field) => {
			if (field.type === 'resourceLocator') return [field.name, { __rl: true, mode: 'id', value: placeholder }];
			if (field.type === 'string') return [field.name, placeholder];
			if (field.type === 'json') return [field.name, '{}'];
			return [field.name, field.default];
		}),
	);
}

/** "resource.operation" for every option of every operation selector in the description. */
function operationsOfDescription(): string[] {
	return description.properties
		.filter((field) => field.name === 'operation')
		.flatMap((field) =>
			(field.displayOptions?.show?.resource as string[]).flatMap((resource) =>
				(field.options as INodePropertyOptions[]).map((option) => `${resource}.${String(option.value)}`),
			),
		);
}

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
	const context = useSandbox();

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
				'searchItem.list',
				'agent.create',
				'agent.get',
				'agent.update',
			].sort(),
		);
	});

	it('shows a field only for the operation it belongs to', () => {
		const known = new Set(operationsOfDescription());
		const shownForUnknown: string[] = [];
		for (const field of description.properties) {
			if (['resource', 'batching'].includes(field.name)) continue;
			const show = field.displayOptions?.show ?? {};
			expect({ field: field.name, resources: show.resource }).toEqual({ field: field.name, resources: expect.any(Array) });
			// The operation selector is the one field shown for a whole resource.
			if (field.name === 'operation') continue;
			expect({ field: field.name, operations: show.operation }).toEqual({ field: field.name, operations: expect.any(Array) });
			for (const resource of show.resource as string[]) {
				for (const operation of show.operation as string[]) {
					if (!known.has(`${resource}.${operation}`)) shownForUnknown.push(`${field.name} (${resource}.${operation})`);
				}
			}
		}
		expect(shownForUnknown).toEqual([]);
	});

	it('offers exactly the operations the router runs, and the router runs each of them', async () => {
		const routed = Object.entries(resources).flatMap(([resource, operations]) =>
			Object.entries(operations).map(([name, operation]) => {
				expect(typeof operation.execute).toBe('function');
				return `${resource}.${name}`;
			}),
		);
		expect(routed.sort()).toEqual(operationsOfDescription().sort());
		const resourceOptions = (description.properties.find((field) => field.name === 'resource')!.options as INodePropertyOptions[]).map(
			(option) => option.value,
		);
		expect(Object.keys(resources).sort()).toEqual(resourceOptions.sort());

		// Through n8n-core against the sandbox: each operation of the description reaches its execute.
		// With placeholder values it succeeds or fails on them, never as an operation the router does not know.
		for (const key of operationsOfDescription()) {
			const [resource, operation] = key.split('.');
			const parameters = { resource, operation, ...requiredValues(resource, operation) };
			const result = await runWorkflow(itemsThen([{}], convoNode(parameters)), { credentials: context.credentials });
			expect({ key, error: result.errorOf('Convo')?.message ?? '' }).not.toEqual({ key, error: expect.stringContaining('is not known') });
			expect({ key, ran: result.errorOf('Convo') !== undefined || result.outputOf('Convo').length > 0 }).toEqual({ key, ran: true });
		}
	});

	it('runs an operation every router entry knows (an unknown one fails clearly)', async () => {
		const result = await runWorkflow(itemsThen([{}], convoNode({ resource: 'message', operation: 'delete' })), {
			credentials: { convoApi: { baseUrl: 'http://127.0.0.1:9', accessToken: 'x' } },
		});
		expect(result.errorOf('Convo')?.message).toContain('The operation "delete" is not known for "message"');
	});
});
