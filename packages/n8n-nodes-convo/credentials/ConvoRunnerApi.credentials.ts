import type {
	IAuthenticateGeneric,
	IAuthenticateRuleResponseCode,
	IAuthenticateRuleResponseSuccessBody,
	Icon,
	ICredentialTestRequest,
	ICredentialType,
	INodeProperties,
} from 'n8n-workflow';

import { RUNNER_ROUTES } from '../nodes/shared/runnerRoutes';

// n8n checks status rules on answers listed in `except` and body rules on every other answer
// (a body rule fails the test when the value at `key` equals `value`; undefined means "absent").
const NOT_THE_RUNNER = 'The Runner URL answered, but not as the convo-runner control API does: check the Runner URL';
const rules: Array<IAuthenticateRuleResponseCode | IAuthenticateRuleResponseSuccessBody> = [
	{
		type: 'responseCode',
		properties: { value: 401, message: 'The token was refused: use the RUNNER_TOKEN the runner was started with' },
	},
	{
		type: 'responseCode',
		properties: { value: 403, message: 'The token was refused: use the RUNNER_TOKEN the runner was started with' },
	},
	{ type: 'responseCode', properties: { value: 404, message: NOT_THE_RUNNER } },
	{ type: 'responseSuccessBody', properties: { key: 'items', value: undefined, message: NOT_THE_RUNNER } },
	{ type: 'responseSuccessBody', properties: { key: 'total', value: undefined, message: NOT_THE_RUNNER } },
];

/** The control API of convo-runner (campaigns, reindex runs, event webhooks): bearer token. */
export class ConvoRunnerApi implements ICredentialType {
	name = 'convoRunnerApi';

	displayName = 'Convo Runner API';

	icon: Icon = { light: 'file:../nodes/Convo/convo.svg', dark: 'file:../nodes/Convo/convo.dark.svg' };

	documentationUrl = 'https://github.com/convo-for-n8n/n8n-nodes-convo#credentials';

	properties: INodeProperties[] = [
		{
			displayName: 'Runner URL',
			name: 'runnerUrl',
			type: 'string',
			default: '',
			required: true,
			placeholder: 'http://127.0.0.1:8080',
			description:
				"Address of the runner's control API (convo-runner start: RUNNER_HTTP_HOST and RUNNER_HTTP_PORT), " +
				'without /api; a trailing slash or a typed /api is removed',
		},
		{
			displayName: 'Token',
			name: 'token',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			description: 'The RUNNER_TOKEN the runner was started with (16 characters or more), sent as a bearer token',
		},
	];

	authenticate: IAuthenticateGeneric = {
		type: 'generic',
		properties: {
			headers: {
				Authorization: '=Bearer {{$credentials.token}}',
			},
		},
	};

	// The first page of one campaign: a read every runner answers once the token is accepted, with
	// `{ items, total, ... }`. A wrong token is 401; another server at the URL answers 404 or
	// without those fields, and the test fails.
	test: ICredentialTestRequest = {
		request: {
			// Same normalization as the node's runner requests: trailing slashes and a typed /api go.
			baseURL: '={{ $credentials.runnerUrl.trim().replace(/(\\/+(api)?)+$/, "") }}',
			url: RUNNER_ROUTES.listCampaigns.path,
			qs: { limit: 1 },
			method: 'GET',
			ignoreHttpStatusErrors: { ignore: true, except: [401, 403, 404] },
		},
		rules: rules as ICredentialTestRequest['rules'],
	};
}
