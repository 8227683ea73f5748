/**
 * What the runner keeps per collection, per item, of the last SUCCESSFUL upsert: one field of a
 * Redis hash, external_id -> `<hash><a|i><embedding key>|<item JSON>`:
 *
 *   hash            16 characters, the content hash sent (contentHash.ts): unchanged items are skipped
 *   a | i           active, or deactivated by the runner
 *   embedding key   '' or 8 characters naming the embedding_json sent (kept once per collection)
 *   item JSON       the item as sent: a deactivation re-sends it with active:false, so the
 *                   service keeps the payload (B1 requires `item`)
 *
 * Written only after the service answered 2xx, so a crash leaves the last known truth; a re-run
 * sends again whatever was not recorded (upserts are idempotent).
 */
import { HASH_LENGTH } from './contentHash';

export interface ItemState {
	hash: string;
	active: boolean;
	embeddingKey: string;
	itemJson: string;
}

export function encodeItemState(state: ItemState): string {
	return `${state.hash}${state.active ? 'a' : 'i'}${state.embeddingKey}|${state.itemJson}`;
}

export function decodeItemState(text: string | null | undefined): ItemState | undefined {
	if (!text) return undefined;
	const bar = text.indexOf('|', HASH_LENGTH + 1);
	return {
		hash: text.slice(0, HASH_LENGTH),
		active: text[HASH_LENGTH] === 'a',
		embeddingKey: text.slice(HASH_LENGTH + 1, bar),
		itemJson: text.slice(bar + 1),
	};
}
