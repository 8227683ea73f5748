import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { UUID_PATTERN } from '../../shared';
import { jsonObjectParameter, objectToPairs, pairsToObject, type KeyValuePair } from '../helpers/json';

const RECIPIENT_HINT =
	'Phone number of the recipient with country code. Spaces, dashes and a leading + or 00 are fine; ' +
	'anything that is not a phone number is refused before sending.';

/** A recipient's phone number as users type it; the operation normalizes it for its API. */
export function recipientPhoneField(name: string, displayName: string): INodeProperties {
	return {
		displayName,
		name,
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. +49 151 12345678',
		description: RECIPIENT_HINT,
	};
}

interface KeyValueFieldOptions {
	name: string;
	displayName: string;
	placeholder: string;
	description: string;
	/** Name of the entry group inside the fixedCollection, e.g. `pairs` -> `metadata.pairs[]`. */
	entryName: string;
	entryDisplayName: string;
	keyDescription: string;
	valueDescription: string;
}

/** A list of key/value pairs (read back with `pairsToObject`). */
export function keyValueField(options: KeyValueFieldOptions): INodeProperties {
	return {
		displayName: options.displayName,
		name: options.name,
		type: 'fixedCollection',
		typeOptions: { multipleValues: true },
		placeholder: options.placeholder,
		default: {},
		description: options.description,
		options: [
			{
				displayName: options.entryDisplayName,
				name: options.entryName,
				values: [
					{ displayName: 'Key', name: 'key', type: 'string', default: '', description: options.keyDescription },
					{ displayName: 'Value', name: 'value', type: 'string', default: '', description: options.valueDescription },
				],
			},
		],
	};
}

/** The UUID pattern without its anchors, to place inside a dashboard link's pattern. */
const UUID_IN_TEXT = UUID_PATTERN.slice(1, -1);

interface IdentifierFieldOptions {
	name: string;
	displayName: string;
	/** What the id names and where the user finds it. */
	description: string;
	required?: boolean;
	/** The dashboard link that ends in this id, `{dashboard_url}/<dashboardPath>/<id>` (e.g. a contact's `href`). */
	dashboardPath?: string;
}

/**
 * A service identifier as a resource locator: By ID is checked as a UUID in the editor, so a
 * mistake shows before an execution; By URL (where the service gives dashboard links) takes the link and
 * extracts the id. Read it with `identifierValue`.
 */
export function identifierField(options: IdentifierFieldOptions): INodeProperties {
	const link = `https?://[^\\s]+/${options.dashboardPath}/(${UUID_IN_TEXT})`;
	return {
		displayName: options.displayName,
		name: options.name,
		type: 'resourceLocator',
		required: options.required ?? true,
		default: { mode: 'id', value: '' },
		description: options.description,
		modes: [
			{
				displayName: 'By ID',
				name: 'id',
				type: 'string',
				placeholder: 'e.g. 9b2d6e0a-4c1f-4e8b-a3d2-5f7c1e9b0a64',
				validation: [
					{
						type: 'regex',
						properties: {
							regex: UUID_PATTERN,
							errorMessage: `${options.displayName} must be a UUID (8-4-4-4-12 hex digits)`,
						},
					},
				],
			},
			...(options.dashboardPath === undefined
				? []
				: [
						{
							displayName: 'By URL',
							name: 'url',
							type: 'string' as const,
							placeholder:
								`e.g. https://app.convo.example/${options.dashboardPath}/` + '9b2d6e0a-4c1f-4e8b-a3d2-5f7c1e9b0a64',
							validation: [
								{
									type: 'regex' as const,
									properties: {
										regex: `^\\s*${link}/?(?:[?#]\\S*)?\\s*$`,
										errorMessage: `Not a dashboard link ending in /${options.dashboardPath}/<ID>`,
									},
								},
							],
							extractValue: { type: 'regex' as const, regex: link },
						},
					]),
		],
	};
}

/** The id of an `identifierField` (a plain string value from older workflow JSON works too). */
export function identifierValue(this: IExecuteFunctions, name: string, itemIndex: number): string {
	return String(this.getNodeParameter(name, itemIndex, '', { extractValue: true }) ?? '').trim();
}

/** Return All, and Limit when not all: for every operation that pages through a list. */
export const returnAllFields: INodeProperties[] = [
	{
		displayName: 'Return All',
		name: 'returnAll',
		type: 'boolean',
		default: false,
		description: 'Whether to return all results or only up to a given limit',
	},
	{
		displayName: 'Limit',
		name: 'limit',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: 50,
		description: 'Max number of results to return',
		displayOptions: { show: { returnAll: [false] } },
	},
];

/**
 * Template variables as name/value pairs (shown with Define Using = Fields Below); their JSON
 * alternative is `variablesJson`, and `templateVariables` reads whichever is chosen.
 */
export function templateVariablesField(description: string, valueDescription: string): INodeProperties {
	return {
		displayName: 'Variables',
		name: 'variables',
		type: 'fixedCollection',
		typeOptions: { multipleValues: true },
		placeholder: 'Add Variable',
		default: {},
		description,
		displayOptions: { show: { defineUsing: ['fields'] } },
		options: [
			{
				displayName: 'Variable',
				name: 'variable',
				values: [
					{
						displayName: 'Name',
						name: 'name',
						type: 'string',
						default: '',
						placeholder: 'e.g. 1 or first_name',
						description: 'Variable name or position',
					},
					{ displayName: 'Value', name: 'value', type: 'string', default: '', description: valueDescription },
				],
			},
		],
	};
}

/** The template variables of an item, from Variables or Variables (JSON), as Define Using says. */
export function templateVariables(this: IExecuteFunctions, itemIndex: number): Record<string, unknown> {
	const byJson = this.getNodeParameter('defineUsing', itemIndex, 'fields') === 'json';
	const pairs: KeyValuePair[] = byJson
		? objectToPairs(
				jsonObjectParameter.call(
					this,
					this.getNodeParameter('variablesJson', itemIndex, '{}'),
					'Variables (JSON)',
					itemIndex,
				),
			)
		: (this.getNodeParameter('variables.variable', itemIndex, []) as Array<{ name?: unknown; value?: unknown }>).map(
				(variable) => ({
					key: variable.name,
					value: String(variable.value ?? ''),
				}),
			);
	return pairsToObject.call(this, pairs, byJson ? 'Variables (JSON)' : 'Variables', itemIndex);
}
