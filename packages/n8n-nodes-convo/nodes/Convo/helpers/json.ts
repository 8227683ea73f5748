import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

/** A JSON parameter: typed JSON text or a value an expression produced; undefined when empty. */
function jsonParameter(
	this: IExecuteFunctions,
	value: unknown,
	fieldName: string,
	itemIndex: number,
	example: string,
): unknown {
	if (typeof value !== 'string') return value ?? undefined;
	if (value.trim() === '') return undefined;
	try {
		return JSON.parse(value);
	} catch (error) {
		throw new NodeOperationError(this.getNode(), `${fieldName} is not valid JSON: ${(error as Error).message}`, {
			itemIndex,
			description: `Nothing was sent. Enter JSON such as ${example}.`,
		});
	}
}

/**
 * A JSON-object parameter: typed JSON text or an object produced by an expression.
 * Returns undefined for an empty value; anything that is not an object fails the item.
 */
export function jsonObjectParameter(
	this: IExecuteFunctions,
	value: unknown,
	fieldName: string,
	itemIndex: number,
): IDataObject | undefined {
	const parsed = jsonParameter.call(this, value, fieldName, itemIndex, '{"title": "Blue shirt"}');
	if (parsed === undefined || parsed === null) return undefined;
	if (typeof parsed !== 'object' || Array.isArray(parsed)) {
		throw new NodeOperationError(this.getNode(), `${fieldName} must be a JSON object`, {
			itemIndex,
			description: 'Nothing was sent. Enter a JSON object such as {"key": "value"}, not a list or a single value.',
		});
	}
	return parsed as IDataObject;
}

/** A JSON-array parameter, like `jsonObjectParameter`; anything that is not a list fails the item. */
export function jsonArrayParameter(
	this: IExecuteFunctions,
	value: unknown,
	fieldName: string,
	itemIndex: number,
): IDataObject[] | undefined {
	const parsed = jsonParameter.call(this, value, fieldName, itemIndex, '[{"index": 0, "text": "order-77"}]');
	if (parsed === undefined || parsed === null) return undefined;
	if (!Array.isArray(parsed)) {
		throw new NodeOperationError(this.getNode(), `${fieldName} must be a JSON list`, {
			itemIndex,
			description: 'Nothing was sent. Enter a JSON list such as [{"index": 0, "text": "order-77"}].',
		});
	}
	return parsed as IDataObject[];
}

export interface KeyValuePair {
	key?: unknown;
	value?: unknown;
}

/** An object's entries as pairs, to combine JSON with pairs typed in a form. */
export function objectToPairs(object: IDataObject | undefined): KeyValuePair[] {
	return Object.entries(object ?? {}).map(([key, value]) => ({ key, value }));
}

/**
 * Key/value pairs as an object. Empty keys are skipped; a key given twice fails the item, naming
 * the field, because one of the values would otherwise be lost without a word.
 */
export function pairsToObject(
	this: IExecuteFunctions,
	pairs: KeyValuePair[] | undefined,
	fieldName: string,
	itemIndex: number,
): IDataObject {
	const out: IDataObject = {};
	for (const pair of pairs ?? []) {
		const key = String(pair.key ?? '').trim();
		if (key === '') continue;
		if (Object.prototype.hasOwnProperty.call(out, key)) {
			throw new NodeOperationError(this.getNode(), `${fieldName}: the key "${key}" is given twice`, {
				itemIndex,
				description: `Nothing was sent. Give each key of ${fieldName} once.`,
			});
		}
		out[key] = pair.value as IDataObject[string];
	}
	return out;
}
