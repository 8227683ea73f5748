/**
 * Executes workflow JSON with n8n-core's WorkflowExecute, the way n8n runs a manual execution:
 * real parameter resolution (expressions included), real credential resolution through the
 * credential classes in credentials/, real HTTP. Nothing of n8n's execute functions is mocked.
 *
 *   const result = await runWorkflow({ nodes: [itemsNode('Items', [{ phone: '+49...' }]), convoNode], connections },
 *                                    { credentials: { convoApi: { baseUrl, accessToken } } });
 *   result.outputOf('Convo'); result.errorOf('Convo');
 *
 * Node types known here: `harness.items` (a start node that emits its `items` parameter; also
 * serves as `n8n-nodes-base.manualTrigger`),
 * `n8n-nodes-convo.convo` and `n8n-nodes-convo.convoTrigger` (also as `CUSTOM.convo` /
 * `CUSTOM.convoTrigger`, the names n8n gives custom extensions).
 */
// The node files are named with their extension: beside each sits its codex `<Name>.node.json`,
// which Node's resolver (used by tsx in the demo) would pick before the .ts file.
import { ExecutionLifecycleHooks, WorkflowExecute } from 'n8n-core';
import type {
	ICredentialDataDecryptedObject,
	ICredentials,
	ICredentialType,
	IConnections,
	IDataObject,
	IExecuteFunctions,
	IHttpRequestHelper,
	IHttpRequestOptions,
	INode,
	INodeCredentialsDetails,
	INodeExecutionData,
	INodeProperties,
	INodeType,
	INodeTypes,
	IRequestOptionsSimplified,
	IRun,
	IVersionedNodeType,
	IWorkflowBase,
	IWorkflowExecuteAdditionalData,
	ExecutionError,
} from 'n8n-workflow';
import { ICredentialsHelper, NodeConnectionTypes, NodeHelpers, setSafeRegexEngine, Workflow } from 'n8n-workflow';

import { ConvoApi } from '../../packages/n8n-nodes-convo/credentials/ConvoApi.credentials';
import { ConvoExternalApi } from '../../packages/n8n-nodes-convo/credentials/ConvoExternalApi.credentials';
import { ConvoRunnerApi } from '../../packages/n8n-nodes-convo/credentials/ConvoRunnerApi.credentials';
import { Convo } from '../../packages/n8n-nodes-convo/nodes/Convo/Convo.node.ts';
import { ConvoRunnerTrigger } from '../../packages/n8n-nodes-convo/nodes/ConvoRunnerTrigger/ConvoRunnerTrigger.node.ts';
import { ConvoTrigger } from '../../packages/n8n-nodes-convo/nodes/ConvoTrigger/ConvoTrigger.node.ts';

// n8n-core logs every node error through its own logger; tests read errors from the run data.
// N8N_LOG_LEVEL=error (or debug) brings the log back.
process.env.N8N_LOG_LEVEL ??= 'silent';

// n8n-workflow runs a parameter's validation regex in a vm with a 250 ms wall-clock limit, its guard
// against patterns a user writes. Here the patterns are the node's own (linear), and a fast-lane
// worker runs at low priority beside runners and browsers on two cores, where a 250 ms pause fails a
// workflow with "Regular expression execution timed out". The e2e suite's real n8n keeps the guard.
setSafeRegexEngine({
	exec: (pattern, input, flags) => new RegExp(pattern, flags).exec(input),
	test: (pattern, input, flags) => new RegExp(pattern, flags).test(input),
	replace: (pattern, input, flags, replacement) => input.replace(new RegExp(pattern, flags), replacement),
	matchAll: (pattern, input, flags) => [
		...input.matchAll(new RegExp(pattern, flags?.includes('g') ? flags : `${flags ?? ''}g`)),
	],
	split: (pattern, input, flags) => input.split(new RegExp(pattern, flags)),
});

/** Credential types by name. TRIGGER's credential may join through `registerCredentialType`. */
const credentialTypes = new Map<string, ICredentialType>([
	['convoApi', new ConvoApi()],
	['convoExternalApi', new ConvoExternalApi()],
	['convoRunnerApi', new ConvoRunnerApi()],
]);

export function registerCredentialType(type: ICredentialType): void {
	credentialTypes.set(type.name, type);
}

export function credentialType(name: string): ICredentialType {
	const type = credentialTypes.get(name);
	if (!type) throw new Error(`Unknown credential type "${name}"`);
	return type;
}

/** A start node: emits the items given in its `items` parameter (a JSON array of objects). */
class HarnessItems implements INodeType {
	description = {
		displayName: 'Harness Items',
		name: 'items',
		group: ['input'],
		version: 1,
		description: 'Emits fixed items',
		defaults: { name: 'Items' },
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		properties: [{ displayName: 'Items', name: 'items', type: 'json', default: '[{}]' }] as INodeProperties[],
	} as INodeType['description'];

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const raw = this.getNodeParameter('items', 0) as string | IDataObject[];
		const items = (typeof raw === 'string' ? JSON.parse(raw) : raw) as IDataObject[];
		return [items.map((json) => ({ json }))];
	}
}

class NodeTypes implements INodeTypes {
	private readonly types = new Map<string, INodeType | IVersionedNodeType>();

	register(type: INodeType | IVersionedNodeType, ...names: string[]): void {
		for (const name of names) this.types.set(name, type);
	}

	getByName(name: string): INodeType | IVersionedNodeType {
		const type = this.types.get(name);
		if (!type) throw new Error(`The harness does not know the node type "${name}"`);
		return type;
	}

	/** As n8n does: a versioned node type gives the version the workflow's node names. */
	getByNameAndVersion(name: string, version?: number): INodeType {
		return NodeHelpers.getVersionedNodeType(this.getByName(name), version);
	}

	getKnownTypes(): IDataObject {
		return {};
	}
}

export const nodeTypes = new NodeTypes();
// With no `items` it emits one empty item, as n8n's Manual Trigger does; examples/ start with that.
nodeTypes.register(new HarnessItems(), 'harness.items', 'n8n-nodes-base.manualTrigger');
nodeTypes.register(new Convo(), 'n8n-nodes-convo.convo', 'CUSTOM.convo');
nodeTypes.register(new ConvoTrigger(), 'n8n-nodes-convo.convoTrigger', 'CUSTOM.convoTrigger');
nodeTypes.register(new ConvoRunnerTrigger(), 'n8n-nodes-convo.convoRunnerTrigger', 'CUSTOM.convoRunnerTrigger');

/** Resolves `={{ ... }}` values of a credential's authenticate/test definitions, as n8n does. */
function resolveCredentialValue(
	value: unknown,
	credentials: ICredentialDataDecryptedObject,
	workflow: Workflow | undefined,
	node: INode | undefined,
): unknown {
	if (typeof value !== 'string' || !value.startsWith('=')) return value;
	const wf = workflow ?? createWorkflow({ nodes: [], connections: {} });
	const anyNode = node ?? {
		id: 'credential',
		name: 'credential',
		type: 'harness.items',
		typeVersion: 1,
		position: [0, 0],
		parameters: {},
	};
	return wf.expression.getSimpleParameterValue(
		anyNode,
		value,
		'internal',
		{ $credentials: credentials },
		undefined,
		'',
	);
}

/**
 * The credentials "store": one decrypted data object per credential type. `authenticate` applies
 * the generic `authenticate` object of the credential class (headers, qs, body, auth).
 */
export class HarnessCredentialsHelper extends ICredentialsHelper {
	constructor(private readonly store: Record<string, ICredentialDataDecryptedObject>) {
		super();
	}

	getParentTypes(): string[] {
		return [];
	}

	isCredentialUsableByNode(): boolean {
		return true;
	}

	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
		requestOptions: IHttpRequestOptions | IRequestOptionsSimplified,
		workflow?: Workflow,
		node?: INode,
	): Promise<IHttpRequestOptions> {
		const authenticate = credentialType(typeName).authenticate;
		const options = requestOptions as IHttpRequestOptions & Record<string, unknown>;
		if (authenticate === undefined) return options;
		if (typeof authenticate === 'function') return await authenticate(credentials, options);
		for (const [where, entries] of Object.entries(authenticate.properties) as Array<
			[string, Record<string, unknown>]
		>) {
			const target = ((options[where] as Record<string, unknown> | undefined) ?? {}) as Record<string, unknown>;
			for (const [key, value] of Object.entries(entries)) {
				target[String(resolveCredentialValue(key, credentials, workflow, node))] = resolveCredentialValue(
					value,
					credentials,
					workflow,
					node,
				);
			}
			options[where] = target;
		}
		return options;
	}

	async preAuthentication(
		_helpers: IHttpRequestHelper,
		_credentials: ICredentialDataDecryptedObject,
		_typeName: string,
	): Promise<undefined> {
		return undefined;
	}

	async runPreAuthentication(): Promise<undefined> {
		return undefined;
	}

	async getCredentials(nodeCredentials: INodeCredentialsDetails, type: string): Promise<ICredentials> {
		throw new Error(`getCredentials(${type}, ${nodeCredentials.name}) is not used by the harness`);
	}

	async getDecrypted(
		_additionalData: IWorkflowExecuteAdditionalData,
		_nodeCredentials: INodeCredentialsDetails,
		type: string,
	): Promise<ICredentialDataDecryptedObject> {
		const data = this.store[type];
		if (!data) throw new Error(`The test gave no credentials of type "${type}"`);
		return { ...data };
	}

	async updateCredentials(): Promise<void> {}

	async updateCredentialsOauthTokenData(): Promise<void> {}

	getCredentialsProperties(type: string): INodeProperties[] {
		return credentialType(type).properties;
	}
}

// n8n reads these as URLs as soon as a parameter is resolved; empty strings fail with "Invalid URL".
const LOCAL = 'http://127.0.0.1:5678';

let executionCount = 0;

export function createAdditionalData(
	credentials: Record<string, ICredentialDataDecryptedObject>,
	workflowData?: IWorkflowBase,
	fixedExecutionId?: string,
	sendDataToUI?: (type: string, data: unknown) => void,
): IWorkflowExecuteAdditionalData {
	const executionId = fixedExecutionId ?? `harness-${Date.now()}-${++executionCount}`;
	const hooksData =
		workflowData ?? ({ id: 'harness', name: 'harness', nodes: [], connections: {} } as unknown as IWorkflowBase);
	return {
		credentialsHelper: new HarnessCredentialsHelper(credentials),
		hooks: new ExecutionLifecycleHooks('manual', executionId, hooksData),
		executionId,
		currentNodeExecutionIndex: 0,
		variables: {},
		restApiUrl: `${LOCAL}/rest`,
		instanceBaseUrl: `${LOCAL}/`,
		formBaseUrl: `${LOCAL}/form`,
		formWaitingBaseUrl: `${LOCAL}/form-waiting`,
		formTestBaseUrl: `${LOCAL}/form-test`,
		webhookBaseUrl: `${LOCAL}/webhook`,
		webhookWaitingBaseUrl: `${LOCAL}/webhook-waiting`,
		webhookTestBaseUrl: `${LOCAL}/webhook-test`,
		mcpBaseUrl: `${LOCAL}/mcp`,
		mcpTestBaseUrl: `${LOCAL}/mcp-test`,
		executeWorkflow: async () => {
			throw new Error('Sub-workflows are not supported by the harness');
		},
		getRunExecutionData: async () => undefined,
		getRuntimeCredential: async () => undefined,
		logAiEvent: () => {},
		// What a manual run sends to the editor (a node's sendMessageToUI), for tests that read it.
		...(sendDataToUI ? { sendDataToUI } : {}),
		startRunnerTask: async () => {
			throw new Error('Task runners are not supported by the harness');
		},
	} as unknown as IWorkflowExecuteAdditionalData;
}

export interface WorkflowJson {
	name?: string;
	/** The workflow's time zone setting (an IANA name); n8n's default zone when absent. */
	timezone?: string;
	nodes: Array<Partial<INode> & Pick<INode, 'name' | 'type' | 'parameters'>>;
	connections: IConnections;
}

/** Fills what n8n's editor would (ids, versions, positions) so test JSON stays short. */
function completeNodes(nodes: WorkflowJson['nodes']): INode[] {
	return nodes.map((node, index) => ({
		id: node.id ?? `node-${index}`,
		typeVersion: node.typeVersion ?? 1,
		position: node.position ?? [index * 200, 0],
		...node,
	}));
}

export function createWorkflow(json: WorkflowJson): Workflow {
	return new Workflow({
		id: 'harness',
		name: json.name ?? 'harness',
		nodes: completeNodes(json.nodes),
		connections: json.connections,
		active: false,
		nodeTypes,
		staticData: {},
		settings: { executionOrder: 'v1', ...(json.timezone ? { timezone: json.timezone } : {}) },
	});
}

export interface RunOptions {
	credentials: Record<string, ICredentialDataDecryptedObject>;
	/** Defaults to the first node without incoming connections. */
	startNode?: string;
	/** The execution's id (a new one per run unless given): the same id runs "the same execution" again. */
	executionId?: string;
	/** Receives what the run sends to the editor (`sendConsoleMessage` for a node's sendMessageToUI). */
	sendDataToUI?: (type: string, data: unknown) => void;
}

export interface RunResult {
	run: IRun;
	/** Items of the node's output (main 0 unless given; 1 is the error output) in its first run; [] when none. */
	outputOf(nodeName: string, outputIndex?: number): INodeExecutionData[];
	/** The error the node stopped the workflow with, if any. */
	errorOf(nodeName: string): ExecutionError | undefined;
}

export async function runWorkflow(json: WorkflowJson, options: RunOptions): Promise<RunResult> {
	const workflow = createWorkflow(json);
	const targets = new Set(
		Object.values(json.connections).flatMap((byType) =>
			Object.values(byType).flatMap((outputs) => (outputs ?? []).flatMap((list) => (list ?? []).map((c) => c.node))),
		),
	);
	const startName = options.startNode ?? json.nodes.find((node) => !targets.has(node.name))?.name;
	const startNode = startName ? workflow.getNode(startName) : null;
	if (!startNode) throw new Error(`No start node "${String(startName)}" in the workflow`);

	const workflowData = {
		id: workflow.id,
		name: workflow.name,
		nodes: Object.values(workflow.nodes),
		connections: json.connections,
	} as unknown as IWorkflowBase;
	const execute = new WorkflowExecute(
		createAdditionalData(options.credentials, workflowData, options.executionId, options.sendDataToUI),
		'manual',
	);
	const run = await execute.run({ workflow, startNode });
	const runData = run.data.resultData.runData;
	return {
		run,
		outputOf: (nodeName, outputIndex = 0) => runData[nodeName]?.[0]?.data?.main?.[outputIndex] ?? [],
		errorOf: (nodeName) => runData[nodeName]?.[0]?.error,
	};
}

/** A start node that emits these items. */
export function itemsNode(name: string, items: IDataObject[]): WorkflowJson['nodes'][number] {
	return { name, type: 'harness.items', parameters: { items: JSON.stringify(items) } };
}

/** The commonest shape: a start node with items connected to one Convo node. */
export function itemsThen(items: IDataObject[], node: WorkflowJson['nodes'][number]): WorkflowJson {
	return {
		nodes: [itemsNode('Items', items), node],
		connections: { Items: { main: [[{ node: node.name, type: NodeConnectionTypes.Main, index: 0 }]] } },
	};
}

/** A Convo node as workflow JSON, with both credentials referenced (n8n shows only the one that applies). */
export function convoNode(parameters: IDataObject, name = 'Convo'): WorkflowJson['nodes'][number] {
	return {
		name,
		type: 'n8n-nodes-convo.convo',
		parameters: parameters as INode['parameters'],
		credentials: {
			convoApi: { id: '1', name: 'Convo API' },
			convoExternalApi: { id: '2', name: 'Convo External API' },
			convoRunnerApi: { id: '3', name: 'Convo Runner API' },
		},
	};
}

/**
 * Runs a credential's `test` request the way n8n's credential tester does: expressions resolved
 * against the credential data, the generic `authenticate` applied, then the `responseCode` rules.
 * Returns n8n's verdict: OK, or the rule's message.
 */
export async function testCredential(
	type: string,
	data: ICredentialDataDecryptedObject,
): Promise<{ status: 'OK' | 'Error'; message: string; statusCode?: number }> {
	const test = credentialType(type).test;
	if (!test) throw new Error(`Credential type "${type}" has no test request`);
	const resolve = (value: unknown) => resolveCredentialValue(value, data, undefined, undefined);
	const request = test.request;
	const url = new URL(`${String(resolve(request.baseURL ?? ''))}${String(resolve(request.url ?? ''))}`);
	for (const [key, value] of Object.entries(request.qs ?? {})) url.searchParams.set(key, String(resolve(value)));
	const authenticated = await new HarnessCredentialsHelper({}).authenticate(data, type, {
		url: url.toString(),
		headers: {},
	});
	let response: Response;
	try {
		response = await fetch(url, {
			method: request.method ?? 'GET',
			headers: authenticated.headers as Record<string, string>,
		});
	} catch (error) {
		return { status: 'Error', message: `Could not connect: ${(error as Error).message}` };
	}
	// As n8n's credential tester: an answer the request does not ignore is an error, checked
	// against the status rules; any other answer's body is checked against the body rules.
	const ignore = request.ignoreHttpStatusErrors;
	const refused =
		typeof ignore === 'object' ? ignore.except?.includes(response.status) : !ignore && response.status >= 400;
	const rules = (test.rules ?? []) as Array<{
		type: string;
		properties: { value: unknown; message: string; key?: string };
	}>;
	if (refused) {
		const rule = rules.find(
			(candidate) => candidate.type === 'responseCode' && candidate.properties.value === response.status,
		);
		return {
			status: 'Error',
			message: rule?.properties.message ?? `Received HTTP status code: ${response.status}`,
			statusCode: response.status,
		};
	}
	const text = await response.text();
	let body: unknown = text;
	try {
		body = JSON.parse(text);
	} catch {
		// Not JSON: body rules read nothing from it.
	}
	const at = (value: unknown, path: string) =>
		path
			.split('.')
			.reduce<unknown>(
				(current, key) =>
					current && typeof current === 'object' ? (current as Record<string, unknown>)[key] : undefined,
				value,
			);
	for (const rule of rules) {
		if (rule.type === 'responseSuccessBody' && at(body, rule.properties.key ?? '') === rule.properties.value) {
			return { status: 'Error', message: rule.properties.message, statusCode: response.status };
		}
	}
	return { status: 'OK', message: 'Connection tested successfully', statusCode: response.status };
}
