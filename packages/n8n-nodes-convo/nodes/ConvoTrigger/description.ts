import type { INodeProperties } from 'n8n-workflow';

/**
 * The dashboard has no API: these are the steps the user follows once per workflow. n8n renders
 * a notice's text as HTML, so the steps are numbered lines.
 */
const REGISTRATION_STEPS = [
	'Register this trigger in the Convo dashboard:',
	'1. Open Developer Tools → Event Triggers and create a configuration with event type <b>message_created</b>.',
	'2. Endpoint URL: the <b>Production URL</b> shown above under Webhook URLs. It answers once this ' +
		'workflow is <b>published</b>.',
	'3. Method: the HTTP Method chosen below. With Header Auth, ' +
		'add a custom header with the name and secret of the credential.',
	'4. To try it in the editor: register the <b>Test URL</b> the same way, click <b>Test this trigger</b>, ' +
		'then send a message to your business number. Remove that configuration afterwards.',
	'Every delivery attempt is logged on that dashboard page.',
].join('<br>');

export const description: INodeProperties[] = [
	{
		displayName: REGISTRATION_STEPS,
		name: 'registrationNotice',
		type: 'notice',
		default: '',
	},
	{
		displayName: 'HTTP Method',
		name: 'httpMethod',
		type: 'options',
		options: [
			{ name: 'POST', value: 'POST' },
			{ name: 'PUT', value: 'PUT' },
		],
		default: 'POST',
		description:
			'Method chosen for the event trigger in the dashboard. Deliveries with another method are not ' +
			'answered by this trigger.',
	},
	{
		displayName: 'Authentication',
		name: 'authentication',
		type: 'options',
		options: [
			{ name: 'None', value: 'none' },
			{
				name: 'Header Auth',
				value: 'headerAuth',
				description: 'Accept only deliveries carrying the custom header set in the dashboard',
			},
		],
		default: 'none',
		description: 'How deliveries are checked. Without a check anyone who knows the URL can start the workflow.',
	},
	{
		// "Trigger On" is the label n8n's node creator looks for: each option's action becomes an event it lists.
		displayName: 'Trigger On',
		name: 'triggerOn',
		type: 'options',
		options: [
			{
				name: 'Message Received',
				value: 'received',
				action: 'On message received',
				description: 'A customer sent a message to the business',
			},
			{
				name: 'Message Sent',
				value: 'sent',
				action: 'On message sent',
				description: 'The business sent a message through the API (dashboard sends are not reported)',
			},
			{
				name: 'Any Message',
				value: 'any',
				action: 'On any message',
				description: 'Messages received and sent',
			},
		],
		default: 'received',
		description:
			'Which messages start the workflow. Message Received is the default so that a workflow that replies does ' +
			'not trigger itself in a loop.',
	},
	{
		displayName: 'Channels',
		name: 'channels',
		type: 'string',
		default: '',
		placeholder: 'whatsapp',
		description: 'Comma-separated channels (e.g. whatsapp) whose messages start the workflow. Empty: every channel.',
	},
	{
		displayName: 'Ignore API Sends From Numbers',
		name: 'ignoreSendsFrom',
		type: 'string',
		default: '',
		placeholder: '+49 30 1234567',
		description:
			'Comma-separated business phone numbers. Messages sent through the API from them do not start the ' +
			'workflow: enter the number this workflow replies from to keep its own sends out. Applies to ' +
			'Message Sent and Any Message.',
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [
			{
				displayName: 'Include Headers',
				name: 'includeHeaders',
				type: 'boolean',
				default: false,
				description: 'Whether to add the request headers under delivery.headers (the auth header value is hidden)',
			},
			{
				displayName: 'Include Raw Body',
				name: 'includeRawBody',
				type: 'boolean',
				default: false,
				description: 'Whether to add the body exactly as it arrived, as text, under delivery.rawBody',
			},
		],
	},
];
