import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError, updateDisplayOptions } from 'n8n-workflow';

import { OPERATIONS, SEND_TEMPLATE_FIXED_FIELDS } from '../../../shared';
import { fieldLabels } from '../../helpers/fieldLabels';
import { convoRequest } from '../../transport';
import { jsonArrayParameter } from '../../helpers/json';
import { BUSINESS_NUMBER_LABEL, phoneDigits } from '../../helpers/phone';
import {
	identifierField,
	identifierValue,
	recipientPhoneField,
	templateVariables,
	templateVariablesField,
} from '../../descriptions/common.description';
import { sentMessage, simplifyField } from '../../helpers/simplify';
import { drawOnBudget, drawOnBudgetField } from '../dailyBudget/draw';

const properties: INodeProperties[] = [
	{
		displayName:
			'Sends an approved template through the external API (Convo External API credential) ' +
			'from a business phone number, with named or numbered variables and URL buttons. To send with the Convo ' +
			'API credential, as other messages, use Message → Send with Message Type "Template".',
		name: 'templateSendNotice',
		type: 'notice',
		default: '',
	},
	identifierField({
		displayName: 'Template ID',
		name: 'templateId',
		description:
			'ID of an approved template of the business that owns the API key, ' +
			'shown with the template in the Convo dashboard',
	}),
	{
		// The same label as Campaign → Create's sender (BUSINESS_NUMBER_LABEL); the name stays for saved workflows.
		displayName: BUSINESS_NUMBER_LABEL,
		name: 'fromPhoneNumber',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. +49 30 1234567',
		description:
			'Business phone number the template is sent from, ' +
			'with country code (the same number Campaign → Create sends from)',
	},
	recipientPhoneField('phone', 'Recipient Phone Number'),
	{
		displayName: 'Define Using',
		name: 'defineUsing',
		type: 'options',
		options: [
			{ name: 'Fields Below', value: 'fields', description: 'Fill variables and URL buttons one by one in the form' },
			{
				name: 'JSON',
				value: 'json',
				description: 'Give variables and URL buttons as JSON, as AI agents and mapped data do best',
			},
		],
		default: 'fields',
		description: 'How the template variables and URL buttons are given',
	},
	{
		displayName: 'Variables (JSON)',
		name: 'variablesJson',
		type: 'json',
		default: '{}',
		description:
			'Template variables as one JSON object: {"1": "Ada"} for positional variables, ' +
			'{"first_name": "Ada"} for named ones. URLs do not go here but in URL Buttons (JSON).',
		displayOptions: { show: { defineUsing: ['json'] } },
	},
	{
		displayName: 'URL Buttons (JSON)',
		name: 'buttonsJson',
		type: 'json',
		default: '[]',
		description:
			'Dynamic parts of URL buttons as a JSON list, e.g. [{"index": 0, "text": "order-77"}]: ' +
			'the text replaces {{1}} in the address of the button at that position',
		displayOptions: { show: { defineUsing: ['json'] } },
	},
	templateVariablesField(
		'Values of the template variables: name "1", "2", ... for positional variables, ' +
			'or the variable name (e.g. first_name) for named ones. URLs do not go here but in URL Buttons.',
		'Text that replaces the variable',
	),
	{
		displayName: 'URL Buttons',
		name: 'buttons',
		type: 'fixedCollection',
		typeOptions: { multipleValues: true },
		placeholder: 'Add URL Button',
		default: {},
		description: 'Dynamic parts of URL buttons: the text replaces the {{1}} placeholder in the button address',
		displayOptions: { show: { defineUsing: ['fields'] } },
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
					{
						displayName: 'Text',
						name: 'text',
						type: 'string',
						default: '',
						description: 'Value for the {{1}} placeholder of the button URL',
					},
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
			identifierField({
				displayName: 'Agent ID',
				name: 'agentId',
				description:
					'ID of an agent of the business to assign to the conversation: id in the output of Agent → Create, ' +
					'or shown with the agent in the Convo dashboard',
				required: false,
			}),
		],
	},
	drawOnBudgetField('template', 'Recipient Phone Number'),
	simplifyField(
		'the sent message: messageId, success, recipient and templateName, as Message → Send returns messageId',
	),
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

const labelOf = fieldLabels({ description, apiFields });

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const query: IDataObject = {
		template_id: identifierValue.call(this, 'templateId', itemIndex),
		from_phone_number: phoneDigits.call(
			this,
			this.getNodeParameter('fromPhoneNumber', itemIndex),
			BUSINESS_NUMBER_LABEL,
			itemIndex,
		),
	};
	const agentId = identifierValue.call(this, 'additionalFields.agentId', itemIndex);
	if (agentId !== '') query.agent_id = agentId;

	const body: IDataObject = {
		phone: phoneDigits.call(this, this.getNodeParameter('phone', itemIndex), 'Recipient Phone Number', itemIndex),
	};
	const byJson = this.getNodeParameter('defineUsing', itemIndex, 'fields') === 'json';
	const variables = templateVariables.call(this, itemIndex);
	const reserved = Object.keys(variables).filter((name) =>
		(SEND_TEMPLATE_FIXED_FIELDS as readonly string[]).includes(name),
	);
	if (reserved.length > 0) {
		throw new NodeOperationError(this.getNode(), `Variable name "${reserved[0]}" is reserved`, {
			itemIndex,
			description: `Nothing was sent. "${SEND_TEMPLATE_FIXED_FIELDS.join('" and "')}" cannot be variable names.`,
		});
	}
	Object.assign(body, variables);

	const buttons = byJson
		? (jsonArrayParameter.call(
				this,
				this.getNodeParameter('buttonsJson', itemIndex, '[]'),
				'URL Buttons (JSON)',
				itemIndex,
			) ?? [])
		: (this.getNodeParameter('buttons.button', itemIndex, []) as IDataObject[]);
	if (buttons.length > 0) {
		body.buttons = buttons.map((button) => ({
			index: Number(button.index),
			sub_type: 'url',
			text: String(button.text ?? ''),
		}));
	}

	await drawOnBudget.call(this, itemIndex, String(body.phone));
	const response = await convoRequest.call(this, OPERATIONS.sendTemplate, { query, body }, itemIndex, labelOf);
	if (!this.getNodeParameter('simplify', itemIndex, true)) return response;
	const { message_id: messageId, template_name: templateName, ...rest } = response;
	return sentMessage(messageId, { ...rest, templateName });
}
