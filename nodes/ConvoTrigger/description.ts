import type { INodeProperties } from 'n8n-workflow';

/** The dashboard has no API: these are the steps the user follows once per workflow. */
const REGISTRATION_STEPS =
	'Register this trigger in the Convo dashboard: 1) open Developer Tools → Event Triggers and create a configuration; ' +
	'2) event type: message_created; 3) endpoint URL: the Production URL shown above under Webhook URLs (activate the workflow for it to answer); ' +
	'4) method: the HTTP Method chosen below; 5) with Header Auth, add a custom header with the credential\'s header name and value. ' +
	'Every delivery attempt is logged on that dashboard page.';

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
		description: 'Method chosen for the event trigger in the dashboard. Deliveries with another method are not answered by this trigger.',
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
		displayName: 'Message Status',
		name: 'status',
		type: 'options',
		options: [
			{ name: 'Received', value: 'received', description: 'Messages from customers' },
			{ name: 'Sent', value: 'sent', description: 'Messages sent through the API' },
			{ name: 'Both', value: 'both', description: 'Received and sent messages' },
		],
		default: 'received',
		description:
			'Which messages start the workflow. Received is the default so a workflow that replies does not trigger itself in a loop.',
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
			'Comma-separated business phone numbers. Messages sent through the API from them do not start the workflow: enter the number this workflow replies from to keep its own sends out. Applies to status Sent or Both.',
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
