/**
 * The content hash of an upsert: canonical JSON (object keys sorted at every depth, no spaces) of
 * what B1 receives that the service stores: item, embedding_json (when sent) and active. Field
 * order in the source, or a re-export that reorders keys, does not change it.
 */
import { createHash } from 'node:crypto';

function canonicalJson(value: unknown): string {
	if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
	if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
	const record = value as Record<string, unknown>;
	const keys = Object.keys(record)
		.filter((key) => record[key] !== undefined)
		.sort();
	return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(',')}}`;
}

/** 96 bits of SHA-256 as 16 base64url characters: a changed item goes unnoticed with odds of 2^-96. */
export const HASH_LENGTH = 16;

function shortHash(text: string, length = HASH_LENGTH): string {
	return createHash('sha256').update(text).digest('base64url').slice(0, length);
}

export function contentHash(
	item: Record<string, unknown>,
	embedding: Record<string, unknown> | undefined,
	active: boolean,
): string {
	return shortHash(canonicalJson({ item, embedding_json: embedding, active }));
}

/** The key an embedding_json is kept under, once per collection. */
export const embeddingKey = (embedding: Record<string, unknown>) => shortHash(canonicalJson(embedding), 8);
