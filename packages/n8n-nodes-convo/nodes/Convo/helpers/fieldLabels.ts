import type { INodeProperties, INodePropertyCollection } from 'n8n-workflow';

import type { ContractIssue } from '../../shared';
import type { ConvoOperation } from './interfaces';

type OperationFields = Pick<ConvoOperation, 'description' | 'apiFields'>;

type Field = Pick<INodeProperties, 'name' | 'displayName'> & {
	options?: INodeProperties['options'];
	values?: INodePropertyCollection['values'];
};

/** The label of a parameter given by its path through collections: `additionalFields.assignedUser`. */
export function parameterLabel(properties: readonly Field[], parameterPath: string): string | undefined {
	const [name, ...rest] = parameterPath.split('.');
	const field = properties.find((property) => property.name === name);
	if (!field || rest.length === 0) return field?.displayName;
	const children = ((field.values ?? field.options ?? []) as Array<Partial<Field>>).filter(
		(option) => typeof option.displayName === 'string',
	) as Field[];
	return parameterLabel(children, rest.join('.'));
}

/** `buttons[0].index` -> `buttons[0].index`, `buttons[0]`, `buttons`: the most precise first. */
function fieldPathPrefixes(apiField: string): string[] {
	const prefixes: string[] = [];
	for (let path = apiField; path !== ''; path = path.replace(/(\.[^.[\]]*|\[\d+\])$/, '')) {
		prefixes.push(path);
		if (!/[.[]/.test(path)) break;
	}
	return prefixes;
}

/** The label of the parameter that fills `apiField` in `operation`, if the operation declares one. */
function apiFieldLabel(operation: OperationFields, apiField: string): string | undefined {
	for (const path of fieldPathPrefixes(apiField)) {
		const parameter = operation.apiFields?.[path];
		if (parameter) return parameterLabel(operation.description, parameter);
	}
	return undefined;
}

/** Names an API field by the label of the parameter that fills it, or by its own name when none does. */
export type LabelOf = (apiField: string) => string;

/**
 * An operation's field labels, which it hands to the transport with
 * each request so that errors name fields as the user sees them.
 */
export function fieldLabels(operation: OperationFields): LabelOf {
	return (apiField) => apiFieldLabel(operation, apiField) ?? apiField;
}

/** A contract issue's sentence with the field named by its label instead of its API name. */
export function labelledIssue(labelOf: LabelOf, issue: ContractIssue): string {
	if (issue.field === '' || !issue.message.startsWith(issue.field)) return issue.message;
	return `${labelOf(issue.field)}${issue.message.slice(issue.field.length)}`;
}
