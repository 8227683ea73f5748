/**
 * Serves the Convo Trigger over real HTTP the way n8n's webhook server handles a production
 * webhook of a version-1 node (packages/cli webhook-helpers `executeWebhook`, read for 2.41):
 * route by path and method, read the raw body and pre-parse it by content type, build n8n-core's
 * `WebhookContext`, call the node's `webhook()`, answer as n8n does, and run the workflow with
 * n8n-core's `WorkflowExecute` when the node returns workflowData.
 *
 *   const served = await serveTrigger({ parameters: { triggerOn: 'any' }, auth: { headerName, secret } });
 *   await fetch(served.url, { method: 'POST', ... });
 *   const [execution] = await served.waitForExecutions(1);   // execution.items: the trigger's output
 *
 * What n8n does and this does not: queueing, pin data, response headers/codes set in the node's
 * description (the Convo Trigger sets none), XML and multipart bodies, gzip request bodies.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse as parseQueryString } from 'node:querystring';

import { HookContext, WebhookContext, WorkflowExecute } from 'n8n-core';
import type {
	ICredentialDataDecryptedObject,
	IDataObject,
	INode,
	INodeExecutionData,
	INodeType,
	IRun,
	IWebhookData,
	IWebhookDescription,
	IWebhookResponseData,
	IWorkflowBase,
	IWorkflowExecuteAdditionalData,
	Workflow,
} from 'n8n-workflow';
import { createRunExecutionData, NodeHelpers } from 'n8n-workflow';

import { ConvoTriggerApi } from '../../packages/n8n-nodes-convo/credentials/ConvoTriggerApi.credentials';
import { createAdditionalData, createWorkflow, registerCredentialType, type WorkflowJson } from './workflow';

registerCredentialType(new ConvoTriggerApi());

export const TRIGGER_NODE_NAME = 'Convo Trigger';
const TRIGGER_TYPE = 'n8n-nodes-convo.convoTrigger';
/** The pack's webhook triggers, by their package names and as n8n names custom extensions. */
const TRIGGER_TYPES = ['convoTrigger', 'convoRunnerTrigger'].flatMap((name) => [
	`n8n-nodes-convo.${name}`,
	`CUSTOM.${name}`,
]);
/** Like n8n's editor, which gives every webhook node a fixed id: the URL stays stable. */
const WEBHOOK_ID = '6f1c2b9e-5d4a-4c8e-9b7a-3e2f1a0d9c8b';

export interface TriggerServerOptions {
	/** ConvoTrigger parameters; omitted ones take the node's defaults. */
	parameters?: IDataObject;
	/** With it, authentication is 'headerAuth' and this is the convoTriggerApi credential. */
	auth?: { headerName: string; secret: string };
	host?: string;
	/** Another trigger of the pack (default the Convo Trigger), e.g. `n8n-nodes-convo.convoRunnerTrigger`. */
	type?: string;
	/**
	 * A whole workflow to serve instead of a lone trigger (e.g. an example from examples/): its
	 * trigger node of the pack receives the deliveries and the nodes after it run as in n8n.
	 */
	workflow?: WorkflowJson;
	/** Credentials by type for the trigger (e.g. convoRunnerApi) and the workflow's other nodes. */
	credentials?: Record<string, ICredentialDataDecryptedObject>;
}

/** One workflow execution the trigger started. */
export interface RecordedExecution {
	/** What the trigger node emitted (its main output 0). */
	items: INodeExecutionData[];
	/** The finished run as WorkflowExecute returned it. */
	run: IRun;
}

export interface ServedTrigger {
	/** The node's production URL, as n8n shows it (`{webhookBaseUrl}/{webhookId}/convo`). */
	url: string;
	/** The method the webhook is registered for, from the node's httpMethod parameter. */
	method: string;
	/** Finished executions, in the order the deliveries were accepted. */
	executions: RecordedExecution[];
	/** Executions started so far, finished or not: counted before the 200 is sent. */
	started(): number;
	/** Errors thrown by the node's webhook() (n8n answers them with 500). */
	webhookErrors: Error[];
	/** Resolves once `count` executions have finished; rejects after `timeoutMs`. */
	waitForExecutions(count: number, timeoutMs?: number): Promise<RecordedExecution[]>;
	/**
	 * As n8n does when the workflow is published: the node's webhookMethods.default checkExists,
	 * then create when it answered false (n8n-core's HookContext, mode 'trigger', activation 'activate').
	 */
	activate(): Promise<void>;
	/** As n8n does when the workflow is unpublished: webhookMethods.default.delete. */
	deactivate(): Promise<boolean>;
	/** The node's webhook static data (what n8n stores with the workflow). */
	staticData(): IDataObject;
	close(): Promise<void>;
}

interface WebhookRequest extends IncomingMessage {
	body?: unknown;
	query: IDataObject;
	params: IDataObject;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
	res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
	res.end(JSON.stringify(body));
}

async function readRaw(req: IncomingMessage): Promise<Buffer> {
	const chunks: Buffer[] = [];
	for await (const chunk of req) chunks.push(chunk as Buffer);
	return Buffer.concat(chunks);
}

/** n8n's `parseIncomingMessage` + `parseBody`: content type without parameters, charset, body. */
async function preParse(req: WebhookRequest): Promise<{ ok: true } | { ok: false; hint: string }> {
	const [type = '', ...params] = (req.headers['content-type'] ?? '').split(';');
	req.contentType = type.trim().toLowerCase() || undefined;
	const charset = params.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith('charset='));
	req.encoding = (charset?.slice('charset='.length) ?? 'utf-8') as BufferEncoding;
	req.rawBody = await readRaw(req);
	req._body = true;
	if (req.rawBody.length === 0) return { ok: true };
	const text = req.rawBody.toString(req.encoding);
	try {
		if (req.contentType === 'application/json') req.body = JSON.parse(text);
		else if (req.contentType === 'application/x-www-form-urlencoded') req.body = parseQueryString(text);
		else if (req.contentType === 'text/plain') req.body = text;
	} catch (error) {
		return { ok: false, hint: (error as Error).message };
	}
	return { ok: true };
}

function triggerNode(options: TriggerServerOptions): INode {
	const parameters: IDataObject = { ...options.parameters };
	if (options.auth) parameters.authentication = 'headerAuth';
	const credentials = Object.fromEntries(
		Object.keys(options.credentials ?? {}).map((type, i) => [type, { id: String(i + 2), name: type }]),
	);
	if (options.auth) credentials.convoTriggerApi = { id: '1', name: 'Convo Webhook Auth' };
	return {
		id: 'trigger',
		name: TRIGGER_NODE_NAME,
		type: options.type ?? TRIGGER_TYPE,
		typeVersion: 1,
		position: [0, 0],
		webhookId: WEBHOOK_ID,
		parameters: parameters as INode['parameters'],
		...(Object.keys(credentials).length > 0 ? { credentials } : {}),
	};
}

export async function serveTrigger(options: TriggerServerOptions = {}): Promise<ServedTrigger> {
	const host = options.host ?? '127.0.0.1';
	const credentials: Record<string, ICredentialDataDecryptedObject> = {
		...options.credentials,
		...(options.auth ? { convoTriggerApi: { ...options.auth } } : {}),
	};
	const json = options.workflow ?? { name: 'Convo Trigger test', nodes: [triggerNode(options)], connections: {} };
	const workflow: Workflow = createWorkflow(json);
	const triggerName = json.nodes.find((candidate) => TRIGGER_TYPES.includes(candidate.type))?.name;
	if (!triggerName) throw new Error('The workflow has no trigger node of the pack');
	const node = workflow.getNode(triggerName)!;
	const webhookId = node.webhookId ?? WEBHOOK_ID;
	const nodeType = workflow.nodeTypes.getByNameAndVersion(node.type, node.typeVersion) as INodeType;
	const description = nodeType.description.webhooks![0] as IWebhookDescription;
	const workflowData = {
		id: workflow.id,
		name: workflow.name,
		nodes: Object.values(workflow.nodes),
		connections: json.connections,
	} as unknown as IWorkflowBase;

	const executions: RecordedExecution[] = [];
	const webhookErrors: Error[] = [];
	const running = new Set<Promise<void>>();
	let startedCount = 0;
	let baseUrl = '';

	function additionalDataFor(req?: WebhookRequest, res?: ServerResponse): IWorkflowExecuteAdditionalData {
		const data = createAdditionalData(credentials, workflowData);
		data.webhookBaseUrl = `${baseUrl}/webhook`;
		data.webhookTestBaseUrl = `${baseUrl}/webhook-test`;
		if (req) data.httpRequest = req as unknown as IWorkflowExecuteAdditionalData['httpRequest'];
		if (res) data.httpResponse = res as unknown as IWorkflowExecuteAdditionalData['httpResponse'];
		return data;
	}

	const method = String(workflow.expression.getSimpleParameterValue(node, description.httpMethod, 'webhook', {}));
	const webhookPath = NodeHelpers.getNodeWebhookPath(workflow.id, node, description.path);

	function webhookDataFor(additionalData: IWorkflowExecuteAdditionalData): IWebhookData {
		return {
			httpMethod: method as IWebhookData['httpMethod'],
			node: node.name,
			path: webhookPath,
			webhookDescription: description,
			workflowId: workflow.id,
			workflowExecuteAdditionalData: additionalData,
			webhookId,
		};
	}

	async function execute(items: INodeExecutionData[][], additionalData: IWorkflowExecuteAdditionalData): Promise<void> {
		const runData = createRunExecutionData({
			executionData: { nodeExecutionStack: [{ node, data: { main: items }, source: null }] },
		});
		const run = await new WorkflowExecute(additionalData, 'webhook', runData).processRunExecutionData(workflow);
		const output = run.data.resultData.runData[node.name]?.[0]?.data?.main?.[0] ?? [];
		executions.push({ items: output, run });
	}

	async function handle(req: WebhookRequest, res: ServerResponse): Promise<void> {
		const url = new URL(req.url ?? '/', baseUrl);
		const path = url.pathname.replace(/^\/webhook\//, '');
		if (!url.pathname.startsWith('/webhook/') || path !== webhookPath) {
			return sendJson(res, 404, {
				code: 404,
				message: `The requested webhook "${req.method} ${path}" is not registered.`,
			});
		}
		if (req.method !== method) {
			return sendJson(res, 404, {
				code: 404,
				message: `This webhook is not registered for ${req.method} requests. Did you mean to make a ${method} request?`,
			});
		}
		req.query = Object.fromEntries(url.searchParams);
		req.params = {};
		const parsed = await preParse(req);
		if (!parsed.ok)
			return sendJson(res, 422, { code: 422, message: 'Failed to parse request body', hint: parsed.hint });

		const additionalData = additionalDataFor(req, res);
		const webhookData = webhookDataFor(additionalData);
		let result: IWebhookResponseData;
		try {
			const context = new WebhookContext(workflow, node, additionalData, 'webhook', webhookData, [], null);
			result = await nodeType.webhook!.call(context);
		} catch (error) {
			webhookErrors.push(error as Error);
			return sendJson(res, 500, { code: 0, message: 'Workflow Webhook Error: Workflow could not be started!' });
		}
		if (result.noWebhookResponse === true) return;
		if (result.workflowData === undefined) {
			return sendJson(
				res,
				200,
				result.webhookResponse !== undefined ? result.webhookResponse : { message: 'Webhook call received' },
			);
		}
		// onReceived: n8n starts the execution, then answers without waiting for it.
		startedCount += 1;
		const done = execute(result.workflowData, additionalDataFor()).finally(() => running.delete(done));
		running.add(done);
		sendJson(res, 200, { message: 'Workflow was started' });
	}

	const server: Server = createServer((req, res) => {
		handle(req as WebhookRequest, res).catch((error: unknown) => {
			webhookErrors.push(error as Error);
			if (!res.headersSent) sendJson(res, 500, { code: 0, message: 'harness error' });
		});
	});
	await new Promise<void>((resolve) => server.listen(0, host, resolve));
	baseUrl = `http://${host}:${(server.address() as AddressInfo).port}`;

	// The URL n8n itself computes for the node (what the editor shows under "Production URL").
	const probeData = additionalDataFor();
	const probe = new WebhookContext(workflow, node, probeData, 'webhook', webhookDataFor(probeData), [], null);
	const productionUrl = probe.getNodeWebhookUrl('default')!;

	const hookContext = () => {
		const data = additionalDataFor();
		return new HookContext(workflow, node, data, 'trigger', 'activate', webhookDataFor(data));
	};
	const webhookMethods = (
		nodeType as INodeType & { webhookMethods?: Record<string, Record<string, (this: unknown) => Promise<boolean>>> }
	).webhookMethods?.default;

	return {
		url: productionUrl,
		method,
		executions,
		started: () => startedCount,
		webhookErrors,
		async activate() {
			if (!webhookMethods) return;
			if (!(await webhookMethods.checkExists.call(hookContext()))) await webhookMethods.create.call(hookContext());
		},
		async deactivate() {
			return webhookMethods ? await webhookMethods.delete.call(hookContext()) : true;
		},
		staticData: () => workflow.getStaticData('node', node) as IDataObject,
		async waitForExecutions(count, timeoutMs = 5000) {
			const deadline = Date.now() + timeoutMs;
			while (executions.length < count) {
				if (Date.now() > deadline) {
					throw new Error(`Expected ${count} executions within ${timeoutMs} ms, got ${executions.length}`);
				}
				await new Promise((resolve) => setTimeout(resolve, 10));
			}
			return executions.slice(0, count);
		},
		async close() {
			await Promise.allSettled([...running]);
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
}
