import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { OPERATIONS } from '../../../shared';
import { fieldLabels } from '../../helpers/fieldLabels';
import { convoRequest } from '../../transport';
import { simplifyField, unwrapAgent } from '../../helpers/simplify';
import { handoffFields, toolsFrom } from './fields';

const properties: INodeProperties[] = [
	{
		displayName: 'Name',
		name: 'name',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. Support assistant',
		description: 'Display name of the agent',
	},
	{
		displayName: 'System Prompt',
		name: 'systemPrompt',
		type: 'string',
		typeOptions: { rows: 6 },
		required: true,
		default: '',
		description: 'Main prompt that tells the agent who it is and how to answer',
	},
	{
		displayName: 'Tools',
		name: 'tools',
		type: 'collection',
		placeholder: 'Add Tool Setting',
		default: {},
		description: 'Tools the agent may use, such as handing the conversation over to a human',
		options: [
			...handoffFields,
			{
				displayName: 'Tools JSON',
				name: 'toolsJson',
				type: 'json',
				default: '{}',
				description:
					'Further tool configuration as a JSON object, e.g. {"handoff_to_human_control": {"enabled": true}}',
			},
		],
	},
	simplifyField('the agent itself'),
];

export const description = updateDisplayOptions({ show: { resource: ['agent'], operation: ['create'] } }, properties);

/** The parameter that fills each API field, so errors name fields by their labels. */
export const apiFields: Readonly<Record<string, string>> = {
	'agent.name': 'name',
	'agent.system_prompt': 'systemPrompt',
	'agent.tools': 'tools',
};

const labelOf = fieldLabels({ description, apiFields });

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const agent: IDataObject = {
		name: String(this.getNodeParameter('name', itemIndex)).trim(),
		system_prompt: String(this.getNodeParameter('systemPrompt', itemIndex)),
	};
	const tools = toolsFrom.call(this, this.getNodeParameter('tools', itemIndex, {}) as IDataObject, itemIndex);
	if (tools) agent.tools = tools;
	const response = await convoRequest.call(this, OPERATIONS.createAgent, { body: { agent } }, itemIndex, labelOf);
	return this.getNodeParameter('simplify', itemIndex, true) ? unwrapAgent(response) : response;
}
