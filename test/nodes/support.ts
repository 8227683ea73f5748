/**
 * What every node test file shares: one sandbox per file, credentials of the fixture businesses,
 * and reads of the service state that do not go through the node under test.
 */
import type { ICredentialDataDecryptedObject, IDataObject, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { Convo } from '../../packages/n8n-nodes-convo/nodes/Convo/Convo.node';

import { startSandbox, type RunningSandbox } from '../../sandbox/src';
import { convoNode, itemsThen, runWorkflow, type RunResult } from '../harness/workflow';

export type Business = RunningSandbox['fixture']['businesses'][number];

export interface NodeTestContext {
	sandbox: RunningSandbox;
	/** Business 0 and 1 of the fixture. */
	business: Business;
	other: Business;
	credentials: Record<string, ICredentialDataDecryptedObject>;
}

/** Starts the sandbox before the file's tests, resets it before each test, closes it after. */
export function useSandbox(): NodeTestContext {
	const context = {} as NodeTestContext;
	beforeAll(async () => {
		context.sandbox = await startSandbox({ port: 0 });
		[context.business, context.other] = context.sandbox.fixture.businesses;
		context.credentials = credentialsOf(context.sandbox, context.business);
	});
	beforeEach(async () => {
		await admin(context.sandbox, 'POST', 'reset');
	});
	afterAll(async () => {
		await context.sandbox?.close();
	});
	return context;
}

/** Message → Send of a text, every value read from the input item ($json.channel, .to, .text). */
export const TEXT_SEND_FROM_ITEM = {
	resource: 'message',
	operation: 'send',
	channelUuid: '={{ $json.channel }}',
	channelType: 'whatsapp',
	to: '={{ $json.to }}',
	messageType: 'text',
	text: '={{ $json.text }}',
} as const;

export function credentialsOf(
	sandbox: RunningSandbox,
	business: Business,
): Record<string, ICredentialDataDecryptedObject> {
	return {
		convoApi: { baseUrl: sandbox.baseUrl, accessToken: business.accessToken },
		convoExternalApi: { externalUrl: sandbox.externalUrl, apiKey: business.apiKey },
	};
}

export async function admin<T = unknown>(
	sandbox: RunningSandbox,
	method: string,
	path: string,
	body?: unknown,
): Promise<T> {
	const response = await fetch(`${sandbox.baseUrl}/__sandbox/${path}`, {
		method,
		headers: body === undefined ? {} : { 'content-type': 'application/json' },
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	if (!response.ok) throw new Error(`admin ${method} ${path} answered ${response.status}: ${await response.text()}`);
	const text = await response.text();
	return (text === '' ? undefined : JSON.parse(text)) as T;
}

export interface SandboxMessage {
	to: string;
	from: string;
	type: string;
	text?: string;
	status: string;
	template?: unknown;
	createdAt: string;
	[key: string]: unknown;
}

export async function sentMessages(context: NodeTestContext, business = context.business): Promise<SandboxMessage[]> {
	const answer = await admin<SandboxMessage[] | { messages: SandboxMessage[] }>(
		context.sandbox,
		'GET',
		`messages?business=${encodeURIComponent(business.id)}`,
	);
	return Array.isArray(answer) ? answer : answer.messages;
}

/** A direct call of the external API with business 0's key: reads state without the node. */
export async function external<T = IDataObject>(
	context: NodeTestContext,
	method: string,
	path: string,
	body?: unknown,
): Promise<{ status: number; body: T }> {
	const response = await fetch(`${context.sandbox.externalUrl}${path}`, {
		method,
		headers: {
			'x-api-key': context.business.apiKey,
			...(body === undefined ? {} : { 'content-type': 'application/json' }),
		},
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	return { status: response.status, body: (await response.json()) as T };
}

/** The contact as the service holds it now (an empty PATCH changes nothing and returns it). */
export async function contactNow(context: NodeTestContext, uuid: string): Promise<IDataObject> {
	const answer = await external<{ contact: IDataObject[] }>(context, 'PATCH', `/contacts/${uuid}`, {});
	return answer.body.contact[0];
}

/** Runs one Convo node over `items` with business 0's credentials unless others are given. */
export async function runConvo(
	context: NodeTestContext,
	parameters: IDataObject,
	options: {
		items?: IDataObject[];
		credentials?: Record<string, ICredentialDataDecryptedObject>;
		node?: IDataObject;
	} = {},
): Promise<RunResult & { output: INodeExecutionData[]; json: IDataObject[] }> {
	const node = { ...convoNode(parameters), ...(options.node ?? {}) };
	const result = await runWorkflow(itemsThen(options.items ?? [{}], node), {
		credentials: options.credentials ?? context.credentials,
	});
	const output = result.outputOf('Convo');
	return { ...result, output, json: output.map((item) => item.json) };
}

/** The message and description the user sees for a failed node, as one string. */
export function shownError(result: RunResult, nodeName = 'Convo'): string {
	const error = result.errorOf(nodeName) as (Error & { description?: string }) | undefined;
	if (!error) throw new Error(`${nodeName} did not fail`);
	return `${error.message} | ${error.description ?? ''}`;
}

/** Credentials with a wrong secret, for 401 cases. */
export function badCredentials(context: NodeTestContext): Record<string, ICredentialDataDecryptedObject> {
	return {
		convoApi: { baseUrl: context.sandbox.baseUrl, accessToken: 'wrong-token' },
		convoExternalApi: { externalUrl: context.sandbox.externalUrl, apiKey: 'live_wrong_key' },
	};
}

const convoProperties = new Convo().getNodeType(1).description.properties;

/**
 * The label the editor shows for a parameter of one operation, read from the node's description
 * (a path through collections: `additionalFields.metadata`), so tests follow label renames.
 */
export function fieldLabel(resource: string, operation: string, parameterPath: string): string {
	const [name, ...rest] = parameterPath.split('.');
	let field = convoProperties.find(
		(property) =>
			property.name === name &&
			property.displayOptions?.show?.resource?.includes(resource) &&
			property.displayOptions?.show?.operation?.includes(operation),
	) as (INodeProperties & { values?: INodeProperties[] }) | undefined;
	for (const part of rest) {
		const children = (field?.values ?? field?.options ?? []) as Array<INodeProperties & { values?: INodeProperties[] }>;
		field = children.find((child) => child.name === part);
	}
	if (!field) throw new Error(`No parameter ${parameterPath} in ${resource} > ${operation}`);
	return field.displayName;
}

/**
 * Campaign → Create's parameters as the campaign tests use them: the business's positional
 * template from its first number at 200/s, variables 1 and 2 from the item's name and order.
 */
export function campaignCreateParameters(
	business: { phoneNumbers: string[] },
	templateId: string,
	extra: IDataObject = {},
): IDataObject {
	return {
		resource: 'campaign',
		operation: 'create',
		templateId: { __rl: true, mode: 'id', value: templateId },
		fromPhoneNumber: `+${business.phoneNumbers[0]}`,
		rate: 200,
		variables: {
			variable: [
				{ name: '1', value: '={{ $json.name }}' },
				{ name: '2', value: '={{ $json.order }}' },
			],
		},
		...extra,
	};
}
