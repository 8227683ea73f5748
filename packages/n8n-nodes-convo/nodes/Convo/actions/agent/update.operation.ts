import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { OPERATIONS } from '../../../shared';
import { fieldLabels } from '../../helpers/fieldLabels';
import { convoRequest } from '../../transport';
import { jsonObjectParameter } from '../../helpers/json';
import { identifierValue } from '../../descriptions/common.description';
import { simplifyField, unwrapAgent } from '../../helpers/simplify';
import { agentIdField, handoffFields, toolsFrom } from './fields';

/** JSON objects the service merges key by key into the stored value (SPEC B11). */
const MERGED_JSON_FIELDS = [
	{
		displayName: 'Activation Rules',
		name: 'activationRules',
		key: 'activation_rules',
		what: 'when the agent becomes active',
	},
	{ displayName: 'Data', name: 'data', key: 'data', what: 'data the agent can use' },
	{
		displayName: 'Follow-Up Settings',
		name: 'followUpSettings',
		key: 'follow_up_settings',
		what: 'follow-up messages',
	},
	{
		displayName: 'Inactivity Run Settings',
		name: 'inactivityRunSettings',
		key: 'inactivity_run_settings',
		what: 'what the agent does when the contact is inactive',
	},
	{
		displayName: 'Prompt Config',
		name: 'promptConfig',
		key: 'prompt_config',
		what: 'the structured prompt, e.g. {"tone_prompt": "friendly"}',
	},
] as const;

const properties: INodeProperties[] = [
	agentIdField,
	{
		displayName: 'Update Fields',
		name: 'updateFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		description: 'Only the fields added here change; JSON objects are merged key by key into the stored ones',
		options: [
			...MERGED_JSON_FIELDS.map(
				(field): INodeProperties => ({
					displayName: field.displayName,
					name: field.name,
					type: 'json',
					default: '{}',
					description:
						`JSON object about ${field.what}; ` +
						'its keys are merged into the stored value and null values are dropped',
				}),
			),
			...handoffFields,
			{
				displayName: 'Name',
				name: 'name',
				type: 'string',
				default: '',
				description: 'New display name of the agent',
			},
			{
				displayName: 'System Prompt',
				name: 'systemPrompt',
				type: 'string',
				typeOptions: { rows: 6 },
				default: '',
				description: 'New main prompt of the agent',
			},
			{
				displayName: 'Tools JSON',
				name: 'toolsJson',
				type: 'json',
				default: '{}',
				description: 'Tool configuration as a JSON object, merged into the stored tools',
			},
		],
	},
	simplifyField('the agent itself'),
];

export const description = updateDisplayOptions({ show: { resource: ['agent'], operation: ['update'] } }, properties);

/** The parameter that fills each API field, so errors name fields by their labels. */
export const apiFields: Readonly<Record<string, string>> = {
	agent_id: 'agentId',
	'agent.name': 'updateFields.name',
	'agent.system_prompt': 'updateFields.systemPrompt',
};

const labelOf = fieldLabels({ description, apiFields });

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const agentId = identifierValue.call(this, 'agentId', itemIndex);
	const fields = this.getNodeParameter('updateFields', itemIndex, {}) as IDataObject;
	const agent: IDataObject = {};
	if (fields.name !== undefined) agent.name = String(fields.name).trim();
	if (fields.systemPrompt !== undefined) agent.system_prompt = String(fields.systemPrompt);
	for (const field of MERGED_JSON_FIELDS) {
		const value = jsonObjectParameter.call(this, fields[field.name], field.displayName, itemIndex);
		if (value && Object.keys(value).length > 0) agent[field.key] = value;
	}
	const tools = toolsFrom.call(this, fields, itemIndex);
	if (tools) agent.tools = tools;
	const response = await convoRequest.call(
		this,
		OPERATIONS.updateAgent,
		{ params: { agent_id: agentId }, body: { agent } },
		itemIndex,
		labelOf,
	);
	return this.getNodeParameter('simplify', itemIndex, true) ? unwrapAgent(response) : response;
}
