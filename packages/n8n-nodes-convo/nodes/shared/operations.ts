import type { z } from 'zod/v4';

import { agentEnvelope, agentParams, createAgentBody, updateAgentBody } from './schemas/agent';
import { noBody, noParams } from './schemas/common';
import {
	contactEnvelope,
	contactMessagesQuery,
	contactMessagesResponse,
	contactParams,
	updateContactBody,
} from './schemas/contact';
import { getConversationQuery, getConversationResponse } from './schemas/conversation';
import { messageStatusParams, messageStatusResponse, sendMessageBody, sendMessageResponse } from './schemas/message';
import {
	listSearchItemsQuery,
	listSearchItemsResponse,
	searchItemSchema,
	upsertSearchItemBody,
} from './schemas/searchItem';
import { sendTemplateBody, sendTemplateQuery, sendTemplateResponse } from './schemas/template';

/** The two APIs of the service (SPEC sections 4 and 5). */
export const APIS = {
	messaging: {
		/** Path prefix under `{base_url}`. */
		prefix: '/v1',
		auth: 'bearer',
		credentialType: 'convoApi',
		credentialName: 'Convo API',
		secretName: 'access token',
	},
	external: {
		/** `{external_url}` ends in this. */
		prefix: '/api/external/v2',
		auth: 'apiKey',
		credentialType: 'convoExternalApi',
		credentialName: 'Convo External API',
		secretName: 'API key',
	},
} as const;
export type ApiKind = keyof typeof APIS;

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT';

export interface OperationContract<
	P extends z.ZodType = z.ZodType,
	Q extends z.ZodType = z.ZodType,
	B extends z.ZodType = z.ZodType,
	R extends z.ZodType = z.ZodType,
> {
	/** The endpoint's number in SPEC section 4. */
	spec: string;
	summary: string;
	method: HttpMethod;
	api: ApiKind;
	/** Relative to the API's root (`{base_url}/v1` or `{external_url}`); `:name` marks a path parameter. */
	path: string;
	params: P;
	query: Q;
	/** `z.undefined()` for endpoints without a body. */
	body: B;
	response: R;
	/** Statuses SPEC section 7 lists for this endpoint, with their meaning. Empty where not shown. */
	documentedErrors: Readonly<Record<number, string>>;
}

const op = <P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, R extends z.ZodType>(
	contract: OperationContract<P, Q, B, R>,
) => contract;

const updateAgent = {
	spec: 'B11',
	summary: 'Partially update an agent; the merged fields are merged key by key, nulls dropped',
	api: 'external',
	path: '/agents/:agent_id',
	params: agentParams,
	query: noParams,
	body: updateAgentBody,
	response: agentEnvelope,
	documentedErrors: {},
} as const;

/** Every operation of the service, keyed by a name the nodes, the runner and the sandbox share. */
export const OPERATIONS = {
	getMessageStatus: op({
		spec: 'A1',
		summary: 'Current delivery state of a message sent through the API',
		method: 'GET',
		api: 'messaging',
		path: '/messages/status/:uuid',
		params: messageStatusParams,
		query: noParams,
		body: noBody,
		response: messageStatusResponse,
		documentedErrors: {},
	}),
	sendMessage: op({
		spec: 'A2',
		summary: 'Send a message through a connected channel',
		method: 'POST',
		api: 'messaging',
		path: '/messages/send',
		params: noParams,
		query: noParams,
		body: sendMessageBody,
		response: sendMessageResponse,
		documentedErrors: {},
	}),
	upsertSearchItem: op({
		spec: 'B1',
		summary: 'Create or update one item in a search collection, keyed by external_id',
		method: 'POST',
		api: 'external',
		path: '/search/item',
		params: noParams,
		query: noParams,
		body: upsertSearchItemBody,
		response: searchItemSchema,
		documentedErrors: { 400: 'validation', 401: 'invalid or missing key' },
	}),
	listSearchItems: op({
		spec: 'B2',
		summary: 'List the items of a search collection',
		method: 'GET',
		api: 'external',
		path: '/search/items',
		params: noParams,
		query: listSearchItemsQuery,
		body: noBody,
		response: listSearchItemsResponse,
		documentedErrors: {},
	}),
	updateContact: op({
		spec: 'B3',
		summary: 'Partially update a contact: name, tags (replace), custom fields (merge), assigned user',
		method: 'PATCH',
		api: 'external',
		path: '/contacts/:uuid',
		params: contactParams,
		query: noParams,
		body: updateContactBody,
		response: contactEnvelope,
		documentedErrors: { 400: 'validation', 401: 'invalid or missing key', 404: 'contact not found' },
	}),
	getContactMessages: op({
		spec: 'B4',
		summary: 'Most recent messages with a contact across all its conversations, newest first',
		method: 'GET',
		api: 'external',
		path: '/contacts/:uuid/messages',
		params: contactParams,
		query: contactMessagesQuery,
		body: noBody,
		response: contactMessagesResponse,
		documentedErrors: { 400: 'validation', 401: 'invalid or missing key', 404: 'contact not found' },
	}),
	closeContactConversations: op({
		spec: 'B5',
		summary: "Close (archive) all the contact's conversations",
		method: 'POST',
		api: 'external',
		path: '/contacts/:uuid/conversation/close',
		params: contactParams,
		query: noParams,
		body: noBody,
		response: contactEnvelope,
		documentedErrors: { 401: 'invalid or missing key', 404: 'contact not found' },
	}),
	openContactConversations: op({
		spec: 'B6',
		summary: "Reopen (unarchive) all the contact's conversations",
		method: 'POST',
		api: 'external',
		path: '/contacts/:uuid/conversation/open',
		params: contactParams,
		query: noParams,
		body: noBody,
		response: contactEnvelope,
		documentedErrors: { 401: 'invalid or missing key', 404: 'contact not found' },
	}),
	getConversation: op({
		spec: 'B7',
		summary: 'Look up one conversation and its messages by phone and/or a contact field',
		method: 'GET',
		api: 'external',
		path: '/conversations',
		params: noParams,
		query: getConversationQuery,
		body: noBody,
		response: getConversationResponse,
		documentedErrors: {
			400: 'validation (no lookup method given)',
			401: 'invalid or missing key',
			404: 'no contact or conversation found',
			409: 'several contacts or conversations found',
			500: 'internal error',
		},
	}),
	sendTemplate: op({
		spec: 'B8',
		summary: 'Send an approved template message',
		method: 'POST',
		api: 'external',
		path: '/send-template',
		params: noParams,
		query: sendTemplateQuery,
		body: sendTemplateBody,
		response: sendTemplateResponse,
		documentedErrors: {
			400: 'validation or blocked send',
			401: 'invalid or missing key',
			403: 'resource does not belong to the business',
			500: 'internal error',
		},
	}),
	createAgent: op({
		spec: 'B9',
		summary: 'Create an agent of type BASIC',
		method: 'POST',
		api: 'external',
		path: '/agents',
		params: noParams,
		query: noParams,
		body: createAgentBody,
		response: agentEnvelope,
		documentedErrors: {},
	}),
	getAgent: op({
		spec: 'B10',
		summary: 'Full configuration of an agent',
		method: 'GET',
		api: 'external',
		path: '/agents/:agent_id',
		params: agentParams,
		query: noParams,
		body: noBody,
		response: agentEnvelope,
		documentedErrors: {},
	}),
	updateAgent: op({ ...updateAgent, method: 'PATCH' }),
	/** SPEC B11: "PUT behaves identically". */
	updateAgentPut: op({ ...updateAgent, method: 'PUT' }),
} as const;

export type OperationKey = keyof typeof OPERATIONS;
export type Operation<K extends OperationKey = OperationKey> = (typeof OPERATIONS)[K];

export const OPERATION_KEYS = Object.keys(OPERATIONS) as OperationKey[];
