import type { IDataObject, INodeProperties } from 'n8n-workflow';

/** The "Simplify" switch of operations whose response wraps what the user wants next. */
export function simplifyField(description: string): INodeProperties {
	return {
		displayName: 'Simplify',
		name: 'simplify',
		type: 'boolean',
		default: true,
		description: `Whether to return ${description} instead of the raw response of the service`,
	};
}

/** `{ contact: [X] }` -> X: contact-management responses wrap the one contact in an array. */
export function unwrapContact(response: IDataObject): IDataObject {
	const contacts = response.contact as IDataObject[] | undefined;
	return contacts?.[0] ?? response;
}

/** `{ key: X, ...rest }` -> X, or the list under `key` as one item per element. */
export function unwrap(response: IDataObject, key: string): IDataObject | IDataObject[] {
	const value = response[key];
	return value && typeof value === 'object' ? (value as IDataObject | IDataObject[]) : response;
}

/** `{ agent: X, business_id }` -> X with business_id, so nothing is lost. */
export function unwrapAgent(response: IDataObject): IDataObject {
	const agent = response.agent as IDataObject | undefined;
	return agent ? { ...agent, business_id: response.business_id } : response;
}

/**
 * What both sends return when simplified: the message id under one name, `messageId`, so the
 * next node reads it the same way whichever send ran (Message → Get Status takes it as is).
 */
export function sentMessage(messageId: IDataObject[string], rest: IDataObject): IDataObject {
	return { messageId, ...rest };
}
