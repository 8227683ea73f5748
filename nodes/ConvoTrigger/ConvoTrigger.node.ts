import type {
	IHookFunctions,
	IWebhookFunctions,
	INodeType,
	INodeTypeDescription,
	IWebhookResponseData,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

/** Starts a workflow when the service delivers a message_created webhook. */
export class ConvoTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Convo Trigger',
		name: 'convoTrigger',
		icon: { light: 'file:convo.svg', dark: 'file:convo.dark.svg' },
		group: ['trigger'],
		version: 1,
		subtitle: '={{ "message_created: " + $parameter["httpMethod"] }}',
		description: 'Starts the workflow when a Convo message is created',
		defaults: { name: 'Convo Trigger' },
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		webhooks: [{ name: 'default', httpMethod: 'POST', responseMode: 'onReceived', path: 'convo' }],
		properties: [],
	};

	// The service has no registration API: the URL is registered by hand in its dashboard.
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
		return { workflowData: [this.helpers.returnJsonArray(this.getBodyData())] };
	}
}
