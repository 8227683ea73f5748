import type { INodeProperties } from 'n8n-workflow';

const RECIPIENT_HINT =
	'Phone number of the recipient with country code. Spaces, dashes and a leading + or 00 are fine; anything that is not a phone number is refused before sending.';

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
