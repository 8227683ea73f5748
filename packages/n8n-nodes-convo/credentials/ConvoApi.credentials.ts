import type {
	IAuthenticateGeneric,
	IAuthenticateRuleResponseCode,
	IAuthenticateRuleResponseSuccessBody,
	Icon,
	ICredentialTestRequest,
	ICredentialType,
	INodeProperties,
} from 'n8n-workflow';

// n8n checks status rules on answers listed in `except` and body rules on every other answer
// (a body rule fails the test when the value at `key` equals `value`; undefined means "absent").
const NOT_THE_SERVICE = 'The Base URL answered, but not as the Convo messaging API does: check the Base URL';
const rules: Array<IAuthenticateRuleResponseCode | IAuthenticateRuleResponseSuccessBody> = [
	{
		type: 'responseCode',
		properties: { value: 401, message: 'The access token was refused: check it in the dashboard' },
	},
	{ type: 'responseCode', properties: { value: 403, message: 'The access token may not use the messaging API' } },
	{ type: 'responseCode', properties: { value: 200, message: NOT_THE_SERVICE } },
	{ type: 'responseSuccessBody', properties: { key: 'status', value: undefined, message: NOT_THE_SERVICE } },
	{ type: 'responseSuccessBody', properties: { key: 'code', value: undefined, message: NOT_THE_SERVICE } },
	{ type: 'responseSuccessBody', properties: { key: 'message', value: undefined, message: NOT_THE_SERVICE } },
];

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
				'Address of the messaging API, without the /v1 version prefix (it is added, ' +
				'and a typed /v1 or trailing slash is removed)',
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

	// The API has no "who am I" call. The status of a message that cannot exist is a lookup only the
	// service answers the way it does: after accepting the token, 404 with its JSON error body
	// (status, code, message; docs/decisions/contract/credential-tests.md). A refused token is 401;
	// any other server at the URL answers without that body (or 200), and the test fails.
	test: ICredentialTestRequest = {
		request: {
			// Same normalization as apiRoot in the contract (nodes/shared/request.ts): trailing slashes and any typed /v1 go.
			baseURL: '={{ $credentials.baseUrl.trim().replace(/(\\/+(v1)?)+$/, "") }}',
			url: '/v1/messages/status/00000000-0000-0000-0000-000000000000',
			method: 'GET',
			ignoreHttpStatusErrors: { ignore: true, except: [200, 401, 403] },
		},
		rules: rules as ICredentialTestRequest['rules'],
	};
}
