import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { phoneDigits } from '../../helpers/phone';

/** The phone of a Suppression operation, as the user sees it. */
export const PHONE_LABEL = 'Phone';

export function phoneField(operation: string, description: string): INodeProperties {
	return {
		displayName: PHONE_LABEL,
		name: 'phone',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. +14155550123',
		description,
		displayOptions: { show: { resource: ['suppression'], operation: [operation] } },
	};
}

/** The item's phone in digits with country code; a wrong one fails naming Phone. */
export function phoneValue(this: IExecuteFunctions, itemIndex: number): string {
	return phoneDigits.call(this, this.getNodeParameter('phone', itemIndex), PHONE_LABEL, itemIndex);
}

/** The runner's 400 about the phone (`phone` in a body, `id` in a path) names the field as the user sees it. */
export const labelOf = (apiField: string) =>
	apiField === 'phone' || apiField === 'id' ? PHONE_LABEL : apiField === 'reason' ? 'Reason' : undefined;
