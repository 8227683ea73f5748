import type { INodeProperties, INodePropertyCollection, INodePropertyMode, INodePropertyOptions } from 'n8n-workflow';

import { RECIPIENT_OUTCOMES } from 'convo-contract';

import codex from '../../packages/n8n-nodes-convo/nodes/Convo/Convo.node.json';
import { Convo } from '../../packages/n8n-nodes-convo/nodes/Convo/Convo.node';
import { resources } from '../../packages/n8n-nodes-convo/nodes/Convo/actions/router';
import { convoNode, itemsThen, runWorkflow } from '../harness/workflow';
import { useSandbox } from './support';

const convo = new Convo();
const description = convo.getNodeType(1).description;

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

	it("offers every recipient outcome of the runner's contract in Campaign → Get Report, and All", () => {
		const outcome = description.properties.find(
			(field) => field.name === 'outcome' && field.displayOptions?.show?.operation?.includes('getReport'),
		);
		const values = (outcome?.options as INodePropertyOptions[]).map((option) => option.value);
		expect(values.sort()).toEqual(['all', ...RECIPIENT_OUTCOMES].sort());
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
				// issue 11: through convo-runner's control API
				'campaign.create',
				'campaign.get',
				'campaign.getReport',
				'campaign.pause',
				'campaign.resume',
				'campaign.cancel',
				'campaign.delete',
				'reindexRun.start',
				'reindexRun.get',
				// issue 23: the runner's suppression list
				'suppression.add',
				'suppression.check',
				'suppression.getAll',
				'suppression.remove',
				// issue 36: the business's daily messaging budget
				'dailyBudget.get',
				'dailyBudget.set',
			].sort(),
		);
	});

	it('shows a field only for the operation it belongs to', () => {
		const known = new Set(operationsOfDescription());
		const shownForUnknown: string[] = [];
		for (const field of description.properties) {
			if (['resource', 'batching'].includes(field.name)) continue;
			const show = field.displayOptions?.show ?? {};
			expect({ field: field.name, resources: show.resource }).toEqual({
				field: field.name,
				resources: expect.any(Array),
			});
			// The operation selector is the one field shown for a whole resource.
			if (field.name === 'operation') continue;
			expect({ field: field.name, operations: show.operation }).toEqual({
				field: field.name,
				operations: expect.any(Array),
			});
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
				// Per item, or (Campaign → Create) once for the whole input.
				expect(typeof (operation.execute ?? operation.executeAll)).toBe('function');
				return `${resource}.${name}`;
			}),
		);
		expect(routed.sort()).toEqual(operationsOfDescription().sort());
		const resourceOptions = (
			description.properties.find((field) => field.name === 'resource')!.options as INodePropertyOptions[]
		).map((option) => option.value);
		expect(Object.keys(resources).sort()).toEqual(resourceOptions.sort());

		// Through n8n-core against the sandbox: each operation of the description reaches its execute.
		// With placeholder values it succeeds or fails on them, never as an operation the router does not know.
		for (const key of operationsOfDescription()) {
			const [resource, operation] = key.split('.');
			const parameters = { resource, operation, ...requiredValues(resource, operation) };
			const result = await runWorkflow(itemsThen([{}], convoNode(parameters)), { credentials: context.credentials });
			expect({ key, error: result.errorOf('Convo')?.message ?? '' }).not.toEqual({
				key,
				error: expect.stringContaining('is not known'),
			});
			expect({ key, ran: result.errorOf('Convo') !== undefined || result.outputOf('Convo').length > 0 }).toEqual({
				key,
				ran: true,
			});
		}
	});

	it('runs an operation every router entry knows (an unknown one fails clearly)', async () => {
		const result = await runWorkflow(itemsThen([{}], convoNode({ resource: 'message', operation: 'delete' })), {
			credentials: { convoApi: { baseUrl: 'http://127.0.0.1:9', accessToken: 'x' } },
		});
		expect(result.errorOf('Convo')?.message).toContain('The operation "delete" is not known for "message"');
	});

	describe('identifier fields', () => {
		// The service's identifiers; campaigns and reindex runs are the runner's, with ids of its own form.
		const identifiers = allFields(description.properties).filter(
			([, field]) => / ID$/.test(field.displayName) && !['externalId', 'campaignId', 'runId'].includes(field.name),
		);
		const mode = (field: INodeProperties, name: string) =>
			field.modes?.find((m) => m.name === name) as INodePropertyMode;
		const regexOf = (m: INodePropertyMode) =>
			new RegExp((m.validation?.[0] as unknown as { properties: { regex: string } }).properties.regex);
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
			expect(new Set(identifiers.filter(([, field]) => mode(field, 'url')).map(([path]) => path))).toEqual(
				new Set(['contactUuid']),
			);
		});
	});
});
