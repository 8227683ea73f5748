/** JSON helpers for agent updates (SPEC B11): nulls dropped, objects merged key by key. */

export type JsonObject = Record<string, unknown>;

function isPlainObject(value: unknown): value is JsonObject {
	return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A copy without null values, at every depth (arrays keep their length; null elements go). */
export function dropNulls<T>(value: T): T {
	if (Array.isArray(value)) return value.filter((element) => element !== null).map(dropNulls) as T;
	if (!isPlainObject(value)) return value;
	const out: JsonObject = {};
	for (const [key, inner] of Object.entries(value)) if (inner !== null) out[key] = dropNulls(inner);
	return out as T;
}

/** `patch` merged into `base`: nested objects merge, everything else (arrays too) replaces. */
export function deepMerge(base: unknown, patch: JsonObject): JsonObject {
	const out: JsonObject = isPlainObject(base) ? structuredClone(base) : {};
	for (const [key, value] of Object.entries(patch)) {
		out[key] = isPlainObject(value) && isPlainObject(out[key]) ? deepMerge(out[key], value) : structuredClone(value);
	}
	return out;
}

/** Tools as saved: the `description` the service generates for each tool is ignored (SPEC B9). */
export function withoutToolDescriptions(tools: JsonObject): JsonObject {
	const out: JsonObject = {};
	for (const [name, tool] of Object.entries(tools)) {
		if (isPlainObject(tool)) {
			const { description: _generated, ...rest } = tool;
			out[name] = rest;
		} else {
			out[name] = tool;
		}
	}
	return out;
}

/** Equality of JSON values regardless of key order and prototypes (parsed bodies vs stored copies). */
export function sameJson(a: unknown, b: unknown): boolean {
	if (a === b) return true;
	if (Array.isArray(a) || Array.isArray(b)) {
		return (
			Array.isArray(a) &&
			Array.isArray(b) &&
			a.length === b.length &&
			a.every((value, index) => sameJson(value, b[index]))
		);
	}
	if (isPlainObject(a) && isPlainObject(b)) {
		const keys = Object.keys(a);
		return (
			keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && sameJson(a[key], b[key]))
		);
	}
	return false;
}
