/** Filling a template's placeholders (`{{1}}`, `{{first_name}}`) with the values sent. */
import { badRequest } from './httpError';
import type { Template } from './model';

export function renderTemplate(template: Template, values: Record<string, string>): string {
	return template.body.replace(
		/\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g,
		(placeholder, name: string) => values[name] ?? placeholder,
	);
}

/**
 * The declared variables' values taken from `source` (numeric keys for positional templates,
 * names for named ones); keys that match no declared variable are ignored. A missing one is 400.
 */
export function declaredVariableValues(
	template: Template,
	source: Record<string, unknown>,
	field: (name: string) => string,
): Record<string, string> {
	const values: Record<string, string> = {};
	for (const name of template.variables) {
		const value = source[name];
		if (value === undefined || value === null || String(value) === '') {
			throw badRequest(
				`${field(name)} is required by template ${template.name} (variables: ${template.variables.join(', ')})`,
				field(name),
			);
		}
		values[name] = String(value);
	}
	return values;
}
