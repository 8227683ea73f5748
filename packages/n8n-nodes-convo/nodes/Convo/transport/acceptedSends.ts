import type { IDataObject } from 'n8n-workflow';

import type { WireRequest } from '../../shared';

/**
 * Answers the service gave to requests that must not be repeated (sends, agent creation), kept
 * for the execution they ran in. n8n's "Retry On Fail" runs the whole node again with every input
 * item in the same execution; an item the service already accepted gets its remembered answer
 * instead of a second message. The key is execution + node + item + request fingerprint, so a
 * new execution, another node, another item or a changed request is sent as usual. Bounded: the
 * oldest answers are forgotten first (docs/decisions.md).
 */
const MAX_REMEMBERED = 10_000;
const remembered = new Map<string, IDataObject>();

export interface SendIdentity {
	executionId: string;
	nodeId: string;
	itemIndex: number;
}

/** cyrb53: a fast 53-bit string hash; the key needs no cryptographic strength, only spread. */
function hash53(text: string): string {
	let h1 = 0xdeadbeef;
	let h2 = 0x41c6ce57;
	for (let i = 0; i < text.length; i++) {
		const code = text.charCodeAt(i);
		h1 = Math.imul(h1 ^ code, 2654435761);
		h2 = Math.imul(h2 ^ code, 1597334677);
	}
	h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
	h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
	return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
}

function keyOf(identity: SendIdentity, request: WireRequest, baseUrl: string): string {
	const fingerprint = hash53(JSON.stringify([baseUrl, request.method, request.path, request.query, request.body ?? null]));
	return `${identity.executionId}\u0000${identity.nodeId}\u0000${identity.itemIndex}\u0000${fingerprint}`;
}

export function acceptedAnswer(identity: SendIdentity, request: WireRequest, baseUrl: string): IDataObject | undefined {
	return remembered.get(keyOf(identity, request, baseUrl));
}

export function rememberAccepted(identity: SendIdentity, request: WireRequest, baseUrl: string, answer: IDataObject): void {
	const key = keyOf(identity, request, baseUrl);
	remembered.delete(key);
	remembered.set(key, answer);
	while (remembered.size > MAX_REMEMBERED) remembered.delete(remembered.keys().next().value as string);
}
