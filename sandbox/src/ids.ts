import { createHash, randomUUID } from 'node:crypto';

/** A UUID derived from a label, so the fixture has the same identifiers on every start. */
export function stableUuid(label: string): string {
	const hex = createHash('sha256').update(`convo-sandbox:${label}`).digest('hex');
	return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** A secret-looking token derived from a label (fixture credentials). */
export function stableToken(label: string, length = 32): string {
	return createHash('sha256').update(`convo-sandbox-secret:${label}`).digest('hex').slice(0, length);
}

export function newUuid(): string {
	return randomUUID();
}
