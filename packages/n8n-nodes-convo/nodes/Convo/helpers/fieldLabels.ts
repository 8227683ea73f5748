import type { IExecuteFunctions, INodeProperties, INodePropertyCollection } from 'n8n-workflow';

import type { ContractIssue } from '../../shared';
import type { ConvoOperation } from './interfaces';

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
export function apiFieldLabel(operation: ConvoOperation, apiField: string): string | undefined {
	for (const path of fieldPathPrefixes(apiField)) {
		const parameter = operation.apiFields?.[path];
		if (parameter) return parameterLabel(operation.description, parameter);
	}
	return undefined;
}

// The operation a node run executes, by its execute context, so that the transport names fields
// by their labels without every operation passing its fields along.
const operationOfRun = new WeakMap<IExecuteFunctions, ConvoOperation>();

export function setOperationOfRun(context: IExecuteFunctions, operation: ConvoOperation): void {
	operationOfRun.set(context, operation);
}

/** What the user calls `apiField` in this run's operation; the API field's name when no parameter fills it. */
export function labelOfApiField(context: IExecuteFunctions, apiField: string): string {
	const operation = operationOfRun.get(context);
	return (operation && apiFieldLabel(operation, apiField)) ?? apiField;
}

/** A contract issue's sentence with the field named by its label instead of its API name. */
export function labelledIssue(context: IExecuteFunctions, issue: ContractIssue): string {
	if (issue.field === '' || !issue.message.startsWith(issue.field)) return issue.message;
	return `${labelOfApiField(context, issue.field)}${issue.message.slice(issue.field.length)}`;
}
