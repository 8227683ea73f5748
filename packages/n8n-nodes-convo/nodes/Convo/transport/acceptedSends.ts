import { createHash } from 'node:crypto';

import type { IDataObject } from 'n8n-workflow';

import type { WireRequest } from '../../shared';

/**
 * Answers the service gave to requests that must not be repeated (sends, agent creation), kept
 * for the execution they ran in. n8n's "Retry On Fail" runs the whole node again with every input
 * item in the same execution; an item the service already accepted gets its remembered answer
 * instead of a second message. The key is execution + node + item + request fingerprint, so a
 * new execution, another node, another item or a changed request is sent as usual. Bounded: the
 * oldest answers are forgotten first (docs/decisions/nodes/retry-on-fail.md).
 */
const MAX_REMEMBERED = 10_000;
const remembered = new Map<string, IDataObject>();

export interface SendIdentity {
	executionId: string;
	nodeId: string;
	itemIndex: number;
}

function keyOf(identity: SendIdentity, request: WireRequest, baseUrl: string): string {
	const described = JSON.stringify([baseUrl, request.method, request.path, request.query, request.body ?? null]);
	// A digest keeps the key short whatever the body's size.
	const fingerprint = createHash('sha256').update(described, 'utf8').digest('base64url');
	return `${identity.executionId}\u0000${identity.nodeId}\u0000${identity.itemIndex}\u0000${fingerprint}`;
}

export function acceptedAnswer(identity: SendIdentity, request: WireRequest, baseUrl: string): IDataObject | undefined {
	return remembered.get(keyOf(identity, request, baseUrl));
}

export function rememberAccepted(
	identity: SendIdentity,
	request: WireRequest,
	baseUrl: string,
	answer: IDataObject,
): void {
	const key = keyOf(identity, request, baseUrl);
	remembered.delete(key);
	remembered.set(key, answer);
	while (remembered.size > MAX_REMEMBERED) remembered.delete(remembered.keys().next().value as string);
}
