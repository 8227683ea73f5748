import type {
	IDataObject,
	IHookFunctions,
	INodeType,
	INodeTypeDescription,
	IWebhookFunctions,
	IWebhookResponseData,
} from 'n8n-workflow';
import { NodeConnectionTypes, NodeOperationError } from 'n8n-workflow';

import {
	RUNNER_EVENTS,
	RUNNER_TEST_EVENT,
	SIGNATURE_HEADER,
	verifyDelivery,
	type RunnerEvent,
	type RunnerEventType,
} from '../shared/runner';
import { RUNNER_ROUTES, runnerPath } from '../shared/runnerRoutes';
import { runnerAnswer, runnerRequest } from '../Convo/transport/runner';

/** The parts of n8n's request and response objects this node uses. */
interface DeliveryRequest {
	body?: unknown;
	rawBody?: Buffer;
	headers: Record<string, string | string[] | undefined>;
}
interface DeliveryResponse {
	writeHead(status: number, headers: Record<string, string>): unknown;
	end(body: string): unknown;
}

/** What the node keeps between activation and deliveries (n8n's webhook static data). */
interface Registration {
	webhookId?: string;
	webhookSecret?: string;
}

const EVENT_OPTIONS: Array<{ name: string; value: RunnerEventType; description: string }> = [
	{
		name: 'Campaign Finished',
		value: 'campaign.finished',
		description: 'A campaign completed, was cancelled or failed (its status, with state and counts)',
	},
	{
		name: 'Campaign Delivery Settled',
		value: 'campaign.delivery_settled',
		description:
			'Every sent message of a campaign reached a final delivery state or its checks ran out ' +
			'(its status with the funnel: delivered, read, replied, failed by reason)',
	},
	{
		name: 'Campaign Variant Chosen',
		value: 'campaign.variant_chosen',
		description:
			"An A/B test's winner was chosen, by the rule, by the first variant after a tie, or by the operator " +
			'(its status with ab_test: the figures it was chosen on)',
	},
	{
		name: 'Campaign Paused',
		value: 'campaign.paused',
		description:
			'A campaign was paused by an operator or by the runner itself (why is in paused_reason and last_error)',
	},
	{
		name: 'Campaign Waiting',
		value: 'campaign.waiting',
		description:
			"A campaign began waiting for the business's daily messaging limit: sending goes on as counted customers " +
			'drop out (when the next customer can be counted is in waiting.next_at)',
	},
	{
		name: 'Reindex Run Finished',
		value: 'reindex.finished',
		description: "A reindex run ended, in any final state (the run's status)",
	},
];

/**
 * Records the event at the runner before the workflow starts (POST /api/webhooks/:id/receipts):
 * true for the first receipt only. The record lives in the runner's Redis, so a repeated delivery
 * (the runner's retry of an answer it did not get, a replay within the signature's tolerance)
 * starts the workflow once whichever n8n process receives it, before or after a restart.
 */
async function firstReceipt(context: IWebhookFunctions, webhookId: string, eventId: string): Promise<boolean | 'gone'> {
	const { statusCode, body } = await runnerRequest.call(context, {
		method: RUNNER_ROUTES.recordReceipt.method,
		path: runnerPath(RUNNER_ROUTES.recordReceipt, webhookId),
		body: { event_id: eventId },
		allowStatuses: [404],
	});
	if (statusCode === 404) return 'gone';
	return (body as IDataObject | undefined)?.first === true;
}

/** Answers the delivery here; n8n then sends nothing and starts no execution. */
function refuse(context: IWebhookFunctions, status: number, message: string): IWebhookResponseData {
	const res = context.getResponseObject() as unknown as DeliveryResponse;
	res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
	res.end(JSON.stringify({ code: status, message }));
	return { noWebhookResponse: true };
}

function selectedEvents(context: IHookFunctions | IWebhookFunctions): RunnerEventType[] {
	const events = context.getNodeParameter('events', []) as string[];
	return RUNNER_EVENTS.filter((event) => events.includes(event));
}

function sameEvents(registered: unknown, wanted: RunnerEventType[]): boolean {
	if (!Array.isArray(registered)) return false;
	return [...registered].map(String).sort().join() === [...wanted].sort().join();
}

function forget(registration: Registration): void {
	delete registration.webhookId;
	delete registration.webhookSecret;
}

/** Starts a workflow when convo-runner reports that a campaign finished or paused, or a reindex run ended. */
export class ConvoRunnerTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Convo Runner Trigger',
		name: 'convoRunnerTrigger',
		icon: { light: 'file:../Convo/convo.svg', dark: 'file:../Convo/convo.dark.svg' },
		group: ['trigger'],
		version: 1,
		subtitle: '={{ ($parameter["events"] || []).join(", ") }}',
		description: 'Starts the workflow when a convo-runner campaign finishes or pauses, or a reindex run ends',
		eventTriggerDescription: 'Waiting for an event from the runner',
		defaults: { name: 'Convo Runner Trigger' },
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'convoRunnerApi', required: true }],
		webhooks: [
			{
				name: 'default',
				httpMethod: 'POST',
				responseMode: 'onReceived',
				path: 'convo-runner',
			},
		],
		properties: [
			{
				displayName:
					'The trigger registers its own URL with the runner when the workflow is published ' +
					'(and removes it when unpublished); the runner must reach n8n at that URL. Each delivery is signed, ' +
					'and one with a missing, wrong or stale signature is refused.',
				name: 'registrationNotice',
				type: 'notice',
				default: '',
			},
			{
				displayName: 'Events',
				name: 'events',
				type: 'multiOptions',
				required: true,
				options: EVENT_OPTIONS,
				default: ['campaign.finished'],
				description: 'Which runner events start the workflow',
			},
		],
	};

	// The runner has a registration API (POST/GET/DELETE /api/webhooks): the node keeps the id and
	// the signing secret the runner answered in its static data, and removes the registration again.
	webhookMethods = {
		default: {
			async checkExists(this: IHookFunctions): Promise<boolean> {
				const registration = this.getWorkflowStaticData('node') as Registration;
				if (typeof registration.webhookId !== 'string') return false;
				const { statusCode, body } = await runnerRequest.call(this, {
					method: RUNNER_ROUTES.getWebhook.method,
					path: runnerPath(RUNNER_ROUTES.getWebhook, registration.webhookId),
					allowStatuses: [404],
				});
				if (statusCode === 404) {
					forget(registration);
					return false;
				}
				const hook = (body ?? {}) as IDataObject;
				if (
					hook.url === this.getNodeWebhookUrl('default') &&
					sameEvents(hook.events, selectedEvents(this)) &&
					registration.webhookSecret &&
					!hook.disabled_at
				) {
					return true;
				}
				// Registered for another URL or other events, or disabled by the runner after failed deliveries: replace it.
				await runnerRequest.call(this, {
					method: RUNNER_ROUTES.removeWebhook.method,
					path: runnerPath(RUNNER_ROUTES.removeWebhook, registration.webhookId),
					allowStatuses: [404],
				});
				forget(registration);
				return false;
			},
			async create(this: IHookFunctions): Promise<boolean> {
				const events = selectedEvents(this);
				if (events.length === 0) {
					throw new NodeOperationError(this.getNode(), 'Events is empty', {
						description: 'Choose at least one event that starts the workflow.',
					});
				}
				const answer = await runnerAnswer(this, 'createWebhook', {
					body: {
						url: this.getNodeWebhookUrl('default'),
						events,
						description: `n8n: ${this.getWorkflow().name ?? 'workflow'} / ${this.getNode().name}`.slice(0, 200),
					},
				});
				if (typeof answer.id !== 'string' || typeof answer.secret !== 'string' || answer.secret === '') {
					throw new NodeOperationError(
						this.getNode(),
						'The runner answered the registration without an id and a secret',
						{
							description:
								'Check that the Runner URL of the Convo Runner API credential points at convo-runner ' +
								'(a version with webhooks).',
						},
					);
				}
				const registration = this.getWorkflowStaticData('node') as Registration;
				registration.webhookId = answer.id;
				registration.webhookSecret = answer.secret;
				return true;
			},
			async delete(this: IHookFunctions): Promise<boolean> {
				const registration = this.getWorkflowStaticData('node') as Registration;
				if (typeof registration.webhookId === 'string') {
					try {
						// 404: already gone, which is what was wanted.
						await runnerRequest.call(this, {
							method: RUNNER_ROUTES.removeWebhook.method,
							path: runnerPath(RUNNER_ROUTES.removeWebhook, registration.webhookId),
							allowStatuses: [404],
						});
					} catch (error) {
						// The runner could not be reached: keep the id so the next activation checks it.
						this.logger.warn(
							`Convo Runner Trigger: could not remove webhook ${registration.webhookId} at the runner: ` +
								`${(error as Error).message}`,
						);
						return false;
					}
				}
				forget(registration);
				return true;
			},
		},
	};

	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		const req = this.getRequestObject() as unknown as DeliveryRequest;
		const registration = this.getWorkflowStaticData('node') as Registration;
		if (typeof registration.webhookSecret !== 'string' || registration.webhookSecret === '') {
			return refuse(this, 401, 'This trigger is not registered with the runner: publish the workflow again');
		}
		// The signature covers the bytes as sent: n8n keeps them in rawBody beside the parsed body.
		const raw = Buffer.isBuffer(req.rawBody)
			? req.rawBody.toString('utf8')
			: typeof req.body === 'string'
				? req.body
				: undefined;
		if (raw === undefined) return refuse(this, 401, 'The delivery has no body to check the signature against');
		const check = verifyDelivery(req.headers[SIGNATURE_HEADER], raw, registration.webhookSecret);
		if (!check.ok) return refuse(this, 401, `Signature check failed: ${check.reason}`);

		let event: RunnerEvent;
		try {
			event = JSON.parse(raw) as RunnerEvent;
		} catch {
			return refuse(this, 400, 'The delivery is not JSON');
		}
		if (event === null || typeof event !== 'object' || typeof event.id !== 'string') {
			return refuse(this, 400, 'The delivery is not a runner event: { id, type, created_at, data }');
		}
		// An operator checking the receiver (the runner's console or API): answered, no workflow started.
		if (event.type === RUNNER_TEST_EVENT) return { webhookResponse: { received: true, ignored: 'test event' } };
		if (!RUNNER_EVENTS.includes(event.type)) {
			return refuse(this, 400, 'The delivery is not a runner event: { id, type, created_at, data }');
		}
		if (!selectedEvents(this).includes(event.type))
			return { webhookResponse: { received: true, ignored: `event ${event.type} not selected` } };
		let first: boolean | 'gone';
		try {
			first = await firstReceipt(this, String(registration.webhookId), event.id);
		} catch (error) {
			// Not recorded, so not started: the runner delivers the event again later.
			return refuse(
				this,
				503,
				'Could not record the event at the runner, so the workflow did not start; the runner delivers it again: ' +
					`${(error as Error).message}`,
			);
		}
		if (first === 'gone')
			return refuse(this, 410, "This trigger's registration is gone at the runner: publish the workflow again");
		if (!first) return { webhookResponse: { received: true, ignored: 'event already received' } };
		return { workflowData: [[{ json: event as unknown as IDataObject }]] };
	}
}
