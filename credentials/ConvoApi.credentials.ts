import type {
	IAuthenticateGeneric,
	Icon,
	ICredentialTestRequest,
	ICredentialType,
	INodeProperties,
} from 'n8n-workflow';

/** The messaging API (v1): bearer token, `{base_url}/v1`. */
export class ConvoApi implements ICredentialType {
	name = 'convoApi';

	displayName = 'Convo API';

	icon: Icon = { light: 'file:../nodes/Convo/convo.svg', dark: 'file:../nodes/Convo/convo.dark.svg' };

	documentationUrl = 'https://github.com/convo-for-n8n/n8n-nodes-convo#credentials';

	properties: INodeProperties[] = [
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			default: '',
			required: true,
			placeholder: 'https://api.example.com',
			description:
				'Address of the messaging API, without the /v1 version prefix (it is added, and a typed /v1 or trailing slash is removed)',
		},
		{
			displayName: 'Access Token',
			name: 'accessToken',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			description: 'Bearer token of the messaging API',
		},
	];

	authenticate: IAuthenticateGeneric = {
		type: 'generic',
		properties: {
			headers: {
				Authorization: '=Bearer {{$credentials.accessToken}}',
			},
		},
	};

	// The API has no "who am I" call. A status lookup of an unknown message answers 404 when the
	// token is accepted and 401 when it is not, so only 401/403 fail the test.
	test: ICredentialTestRequest = {
		request: {
			// Same normalization as apiRoot in nodes/shared: trailing slashes and any typed /v1 go.
			baseURL: '={{ $credentials.baseUrl.trim().replace(/(\\/+(v1)?)+$/, "") }}',
			url: '/v1/messages/status/00000000-0000-0000-0000-000000000000',
			method: 'GET',
			ignoreHttpStatusErrors: { ignore: true, except: [401, 403] },
		},
		rules: [
			{ type: 'responseCode', properties: { value: 401, message: 'The access token was refused: check it in the dashboard' } },
			{ type: 'responseCode', properties: { value: 403, message: 'The access token may not use the messaging API' } },
		],
	};
}
