import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError, updateDisplayOptions } from 'n8n-workflow';

import { OPERATIONS, SEND_TEMPLATE_FIXED_FIELDS } from '../../../shared';
import { convoRequest } from '../../transport';
import { phoneDigits } from '../phone';
import { recipientPhoneField } from '../sharedFields';

const properties: INodeProperties[] = [
	{
		displayName: 'Template ID',
		name: 'templateId',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. 0f8fad5b-d9cb-469f-a165-70867728950e',
		description: 'UUID of an approved template of the business that owns the API key',
	},
	{
		displayName: 'From Phone Number',
		name: 'fromPhoneNumber',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. +49 30 1234567',
		description: 'Business phone number the template is sent from, with country code',
	},
	recipientPhoneField('phone', 'Recipient Phone Number'),
	{
		displayName: 'Variables',
		name: 'variables',
		type: 'fixedCollection',
		typeOptions: { multipleValues: true },
		placeholder: 'Add Variable',
		default: {},
		description:
			'Values of the template variables: name "1", "2", ... for positional variables, or the variable name (e.g. first_name) for named ones. URLs do not go here but in URL Buttons.',
		options: [
			{
				displayName: 'Variable',
				name: 'variable',
				values: [
					{ displayName: 'Name', name: 'name', type: 'string', default: '', placeholder: 'e.g. 1 or first_name', description: 'Variable name or position' },
					{ displayName: 'Value', name: 'value', type: 'string', default: '', description: 'Text that replaces the variable' },
				],
			},
		],
	},
	{
		displayName: 'URL Buttons',
		name: 'buttons',
		type: 'fixedCollection',
		typeOptions: { multipleValues: true },
		placeholder: 'Add URL Button',
		default: {},
		description: 'Dynamic parts of URL buttons: the text replaces the {{1}} placeholder in the button address',
		options: [
			{
				displayName: 'Button',
				name: 'button',
				values: [
					{
						displayName: 'Index',
						name: 'index',
						type: 'number',
						typeOptions: { minValue: 0 },
						default: 0,
						description: 'Position of the button in the template, starting at 0',
					},
					{ displayName: 'Text', name: 'text', type: 'string', default: '', description: 'Value for the {{1}} placeholder of the button URL' },
				],
			},
		],
	},
	{
		displayName: 'Additional Fields',
		name: 'additionalFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		description: 'Optional settings of the send',
		options: [
			{
				displayName: 'Agent ID',
				name: 'agentId',
				type: 'string',
				default: '',
				description: 'UUID of an agent of the business to assign to the conversation',
			},
		],
	},
];

export const description = updateDisplayOptions({ show: { resource: ['template'], operation: ['send'] } }, properties);

/** The parameter that fills each API field, so errors name fields by their labels. */
export const apiFields: Readonly<Record<string, string>> = {
	template_id: 'templateId',
	from_phone_number: 'fromPhoneNumber',
	agent_id: 'additionalFields.agentId',
	phone: 'phone',
	buttons: 'buttons',
};

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const extra = this.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;
	const query: IDataObject = {
		template_id: (this.getNodeParameter('templateId', itemIndex) as string).trim(),
		from_phone_number: phoneDigits.call(this, this.getNodeParameter('fromPhoneNumber', itemIndex), 'From Phone Number', itemIndex),
	};
	if (extra.agentId) query.agent_id = String(extra.agentId).trim();

	const body: IDataObject = {
		phone: phoneDigits.call(this, this.getNodeParameter('phone', itemIndex), 'Recipient Phone Number', itemIndex),
	};
	const variables = this.getNodeParameter('variables.variable', itemIndex, []) as Array<{ name?: unknown; value?: unknown }>;
	for (const variable of variables) {
		const name = String(variable.name ?? '').trim();
		if (name === '') continue;
		if ((SEND_TEMPLATE_FIXED_FIELDS as readonly string[]).includes(name) || name in body) {
			throw new NodeOperationError(this.getNode(), `Variable name "${name}" is used twice or is reserved`, {
				itemIndex,
				description: `Nothing was sent. Give each variable once; "${SEND_TEMPLATE_FIXED_FIELDS.join('" and "')}" cannot be variable names.`,
			});
		}
		body[name] = String(variable.value ?? '');
	}
	const buttons = this.getNodeParameter('buttons.button', itemIndex, []) as Array<{ index: number; text: string }>;
	if (buttons.length > 0) {
		body.buttons = buttons.map((button) => ({ index: Number(button.index), sub_type: 'url', text: String(button.text ?? '') }));
	}

	return await convoRequest.call(this, OPERATIONS.sendTemplate, { query, body }, itemIndex);
}
