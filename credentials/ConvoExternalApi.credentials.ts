import type {
	IAuthenticateGeneric,
	Icon,
	ICredentialTestRequest,
	ICredentialType,
	INodeProperties,
} from 'n8n-workflow';

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
				'Address of the external API. It ends in /api/external/v2; the suffix is added when missing and a trailing slash is removed.',
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

	// Listing the items of a collection that does not exist reads nothing and sends nothing; a key
	// that is refused answers 401.
	test: ICredentialTestRequest = {
		request: {
			baseURL:
				'={{ $credentials.externalUrl.trim().replace(/(\\/+(api\\/external\\/v2)?)+$/, "") + "/api/external/v2" }}',
			url: '/search/items',
			qs: { collection_id: '00000000-0000-0000-0000-000000000000' },
			method: 'GET',
			ignoreHttpStatusErrors: { ignore: true, except: [401, 403] },
		},
		rules: [
			{ type: 'responseCode', properties: { value: 401, message: 'The API key was refused: check it in the dashboard (developer tools)' } },
			{ type: 'responseCode', properties: { value: 403, message: 'The API key may not use the external API' } },
		],
	};
}
