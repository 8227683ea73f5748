import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { OPERATIONS } from '../../../shared';
import { fieldLabels } from '../../helpers/fieldLabels';
import { convoRequest } from '../../transport';
import { identifierValue } from '../../descriptions/common.description';
import { simplifyField, unwrapAgent } from '../../helpers/simplify';
import { agentIdField } from './fields';

const properties: INodeProperties[] = [agentIdField, simplifyField('the agent itself')];

export const description = updateDisplayOptions({ show: { resource: ['agent'], operation: ['get'] } }, properties);

/** The parameter that fills each API field, so errors name fields by their labels. */
export const apiFields: Readonly<Record<string, string>> = { agent_id: 'agentId' };

const labelOf = fieldLabels({ description, apiFields });

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const agentId = identifierValue.call(this, 'agentId', itemIndex);
	const response = await convoRequest.call(
		this,
		OPERATIONS.getAgent,
		{ params: { agent_id: agentId } },
		itemIndex,
		labelOf,
	);
	return this.getNodeParameter('simplify', itemIndex, true) ? unwrapAgent(response) : response;
}
