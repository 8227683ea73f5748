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
const NOT_THE_SERVICE =
	'The External API URL answered, but not as the Convo external API does: check the External API URL';
const rules: Array<IAuthenticateRuleResponseCode | IAuthenticateRuleResponseSuccessBody> = [
	{
		type: 'responseCode',
		properties: { value: 401, message: 'The API key was refused: check it in the dashboard (developer tools)' },
	},
	{ type: 'responseCode', properties: { value: 403, message: 'The API key may not use the external API' } },
	{ type: 'responseCode', properties: { value: 200, message: NOT_THE_SERVICE } },
	{ type: 'responseCode', properties: { value: 404, message: NOT_THE_SERVICE } },
	{ type: 'responseSuccessBody', properties: { key: 'status', value: undefined, message: NOT_THE_SERVICE } },
	{ type: 'responseSuccessBody', properties: { key: 'code', value: undefined, message: NOT_THE_SERVICE } },
	{ type: 'responseSuccessBody', properties: { key: 'message', value: undefined, message: NOT_THE_SERVICE } },
];

/** The external API (v2): `X-API-Key` header, `{external_url}` ending in /api/external/v2. */
export class ConvoExternalApi implements ICredentialType {
	name = 'convoExternalApi';

	displayName = 'Convo External API';

	icon: Icon = { light: 'file:../nodes/Convo/convo.svg', dark: 'file:../nodes/Convo/convo.dark.svg' };

	documentationUrl = 'https://github.com/convo-for-n8n/n8n-nodes-convo#credentials';

	properties: INodeProperties[] = [
		{
			displayName: 'External API URL',
			name: 'externalUrl',
			type: 'string',
			default: '',
			required: true,
			placeholder: 'https://api.example.com/api/external/v2',
			description:
				'Address of the external API. It ends in /api/external/v2; ' +
				'the suffix is added when missing and a trailing slash is removed.',
		},
		{
			displayName: 'API Key',
			name: 'apiKey',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			description: 'Live API key from the dashboard (developer tools)',
		},
	];

	authenticate: IAuthenticateGeneric = {
		type: 'generic',
		properties: {
			headers: {
				'X-API-Key': '={{$credentials.apiKey}}',
			},
		},
	};

	// A conversation lookup without a lookup method reads nothing and is refused by the service,
	// after it accepted the key, with 400 (SPEC B7) and its JSON error body (status, code, message;
	// docs/decisions/contract/credential-tests.md). A refused key is 401; any other server at the
	// URL answers 200, 404 or without that body, and the test fails.
	test: ICredentialTestRequest = {
		request: {
			baseURL:
				'={{ $credentials.externalUrl.trim().replace(/(\\/+(api\\/external\\/v2)?)+$/, "") + "/api/external/v2" }}',
			url: '/conversations',
			method: 'GET',
			ignoreHttpStatusErrors: { ignore: true, except: [200, 401, 403, 404] },
		},
		rules: rules as ICredentialTestRequest['rules'],
	};
}
