import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

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
	let parsed = value;
	if (typeof value === 'string') {
		if (value.trim() === '') return undefined;
		try {
			parsed = JSON.parse(value);
		} catch (error) {
			throw new NodeOperationError(this.getNode(), `${fieldName} is not valid JSON: ${(error as Error).message}`, {
				itemIndex,
				description: 'Nothing was sent. Enter a JSON object, e.g. {"title": "Blue shirt"}.',
			});
		}
	}
	if (parsed === undefined || parsed === null) return undefined;
	if (typeof parsed !== 'object' || Array.isArray(parsed)) {
		throw new NodeOperationError(this.getNode(), `${fieldName} must be a JSON object`, {
			itemIndex,
			description: 'Nothing was sent. Enter a JSON object such as {"key": "value"}, not a list or a single value.',
		});
	}
	return parsed as IDataObject;
}

/** Key/value pairs of a fixedCollection as an object; later pairs win, empty keys are skipped. */
export function pairsToObject(pairs: Array<{ key?: unknown; value?: unknown }> | undefined): Record<string, unknown> {
	const out: Record<string, unknown> = {};
	for (const pair of pairs ?? []) {
		const key = String(pair.key ?? '').trim();
		if (key !== '') out[key] = pair.value;
	}
	return out;
}
