import type {
	ICredentialsDecrypted,
	ICredentialTestFunctions,
	IDataObject,
	IHookFunctions,
	INodeCredentialTestResult,
	INodeType,
	INodeTypeDescription,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import type { HeaderAuth, RequestHeaders } from './auth';
import { hasValidHeader, headerAuthProblem, redactHeaders } from './auth';
import { readDelivery } from './delivery';
import { description } from './description';
import type { TriggerOn } from './filters';
import { ignoredBecause, normalizeNumber, splitList } from './filters';

/** The parts of n8n's request and response objects this node uses (plain Node http works too). */
interface DeliveryRequest {
	body?: unknown;
	rawBody?: Buffer;
	headers: RequestHeaders;
}
interface DeliveryResponse {
	writeHead(status: number, headers: Record<string, string>): unknown;
	end(body: string): unknown;
}

/** Answers the delivery here; n8n then sends nothing and starts no execution. */
function refuse(context: IWebhookFunctions, status: number, message: string): IWebhookResponseData {
	const res = context.getResponseObject() as unknown as DeliveryResponse;
	res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
	res.end(JSON.stringify({ code: status, message }));
	return { noWebhookResponse: true };
}

/** Starts a workflow when the service delivers a message_created webhook. */
export class ConvoTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Convo Trigger',
		name: 'convoTrigger',
		icon: { light: 'file:../Convo/convo.svg', dark: 'file:../Convo/convo.dark.svg' },
		group: ['trigger'],
		version: 1,
		subtitle: '={{ "message_created: " + $parameter["triggerOn"] }}',
		// n8n's nodes panel lists this trigger inside the Convo node's entry (its name is Convo's plus
		// "Trigger") and shows this text as that entry's description, so it describes the whole app
		// first; the trigger itself is listed there by its Trigger On events.
		description:
			'Send WhatsApp messages and templates, manage contacts, conversations, ' +
			'search items and AI agents with Convo; run campaigns and reindexes through convo-runner; ' +
			'start workflows when a message is received or sent',
		eventTriggerDescription: 'Waiting for a message_created delivery to the Test URL',
		defaults: { name: 'Convo Trigger' },
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [
			{
				name: 'convoTriggerApi',
				required: true,
				testedBy: 'convoTriggerApiTest',
				displayOptions: { show: { authentication: ['headerAuth'] } },
			},
		],
		webhooks: [
			{
				name: 'default',
				httpMethod: '={{$parameter["httpMethod"]}}',
				responseMode: 'onReceived',
				path: 'convo',
			},
		],
		properties: description,
	};

	methods = {
		credentialTest: {
			// Nothing is sent with this credential; the test checks that it can match a header at all.
			async convoTriggerApiTest(
				this: ICredentialTestFunctions,
				credential: ICredentialsDecrypted,
			): Promise<INodeCredentialTestResult> {
				const problem = headerAuthProblem((credential.data ?? {}) as Partial<HeaderAuth>);
				return problem === undefined
					? { status: 'OK', message: 'The header can be checked; add the same one in the dashboard' }
					: { status: 'Error', message: problem };
			},
		},
	};

	// The service has no registration API: the URL is registered by hand in its dashboard, so
	// there is nothing to check, create or delete.
	webhookMethods = {
		default: {
			async checkExists(this: IHookFunctions): Promise<boolean> {
				return true;
			},
			async create(this: IHookFunctions): Promise<boolean> {
				return true;
			},
			async delete(this: IHookFunctions): Promise<boolean> {
				return true;
			},
		},
	};

	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		const req = this.getRequestObject() as unknown as DeliveryRequest;

		let auth: HeaderAuth | undefined;
		if (this.getNodeParameter('authentication', 'none') === 'headerAuth') {
			auth = await this.getCredentials<HeaderAuth>('convoTriggerApi');
			const problem = headerAuthProblem(auth);
			// A broken credential is the workflow's fault, not the sender's.
			if (problem !== undefined) return refuse(this, 500, `The trigger's credential is incomplete: ${problem}`);
			if (!hasValidHeader(req.headers, auth)) {
				return refuse(this, 401, 'Authorization failed: the expected header is missing or its value is wrong');
			}
		}

		const delivery = readDelivery(req.body, req.rawBody);
		if (!delivery.ok) return refuse(this, 400, delivery.reason);

		const ignored = ignoredBecause(delivery.payload, {
			triggerOn: this.getNodeParameter('triggerOn', 'received') as TriggerOn,
			channels: splitList(this.getNodeParameter('channels', '') as string).map((c) => c.toLowerCase()),
			ignoreSendsFrom: splitList(this.getNodeParameter('ignoreSendsFrom', '') as string).map(normalizeNumber),
		});
		// Answered 200: the delivery was fine, this workflow just does not want it.
		if (ignored !== undefined) return { webhookResponse: { received: true, ignored } };

		const options = this.getNodeParameter('options', {}) as { includeHeaders?: boolean; includeRawBody?: boolean };
		const json: IDataObject = { ...delivery.payload };
		if (options.includeHeaders === true || options.includeRawBody === true) {
			const extra: IDataObject = {};
			if (options.includeHeaders === true) extra.headers = redactHeaders(req.headers, auth) as IDataObject;
			if (options.includeRawBody === true) extra.rawBody = delivery.rawBody;
			json.delivery = extra;
		}
		return { workflowData: [[{ json }]] };
	}
}
