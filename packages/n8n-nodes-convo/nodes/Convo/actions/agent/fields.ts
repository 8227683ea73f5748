import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { jsonObjectParameter } from '../../helpers/json';
import { identifierField } from '../../descriptions/common.description';

export const agentIdField = identifierField({
	displayName: 'Agent ID',
	name: 'agentId',
	description:
		'ID of an agent of the business that owns the API key: id in the output of Agent → Create, ' +
		'or shown with the agent in the Convo dashboard',
});

/** Fields of the "handoff to human control" tool, offered as plain fields rather than JSON. */
export const handoffFields: INodeProperties[] = [
	{
		displayName: 'Handoff to Human',
		name: 'handoffEnabled',
		type: 'boolean',
		default: true,
		description: 'Whether the agent may hand the conversation over to a human',
	},
	{
		displayName: 'Handoff Instructions',
		name: 'handoffInstructions',
		type: 'string',
		typeOptions: { rows: 3 },
		default: '',
		description: 'When and how the agent hands the conversation over to a human',
	},
];

/**
 * The `tools` object from a Tools JSON field and the handoff fields; the handoff fields win
 * over a handoff entry in the JSON. Undefined when none of them was given.
 */
export function toolsFrom(this: IExecuteFunctions, fields: IDataObject, itemIndex: number): IDataObject | undefined {
	const tools = { ...(jsonObjectParameter.call(this, fields.toolsJson, 'Tools', itemIndex) ?? {}) };
	if (fields.handoffEnabled !== undefined || fields.handoffInstructions !== undefined) {
		const handoff: IDataObject = { ...((tools.handoff_to_human_control as IDataObject | undefined) ?? {}) };
		if (fields.handoffEnabled !== undefined) handoff.enabled = fields.handoffEnabled;
		if (fields.handoffInstructions !== undefined && fields.handoffInstructions !== '') {
			handoff.instructions = fields.handoffInstructions;
		}
		tools.handoff_to_human_control = handoff;
	}
	return Object.keys(tools).length > 0 ? tools : undefined;
}
