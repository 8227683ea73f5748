import type { Icon, ICredentialType, INodeProperties } from 'n8n-workflow';

/**
 * The custom header the service's dashboard adds to every message_created delivery. The Convo
 * Trigger compares it with what arrives; nothing is sent with it, so it has no request test (the
 * trigger checks its form through `testedBy`).
 */
export class ConvoTriggerApi implements ICredentialType {
	name = 'convoTriggerApi';

	displayName = 'Convo Webhook Auth API';

	icon: Icon = { light: 'file:../nodes/Convo/convo.svg', dark: 'file:../nodes/Convo/convo.dark.svg' };

	documentationUrl = 'https://github.com/convo-for-n8n/n8n-nodes-convo#convo-trigger';

	properties: INodeProperties[] = [
		{
			displayName: 'Header Name',
			name: 'headerName',
			type: 'string',
			default: 'X-Convo-Webhook-Secret',
			required: true,
			description:
				'Name of the custom header added to the event trigger in the dashboard (developer tools, ' +
				'event triggers). Case does not matter.',
		},
		{
			displayName: 'Secret',
			name: 'secret',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			description: 'Secret value of that header, exactly as entered in the dashboard. Use a long random string.',
		},
	];
}
