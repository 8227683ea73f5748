/**
 * Replies attributed to campaigns. PLACEHOLDER with the signatures agreed in the delivery plan:
 * another change (the replies branch) owns this file and replaces it; until then nothing is
 * recorded and every count is zero.
 */
import type { RunnerContext } from '../context';

/** Records that recipient `index` of the campaign replied at `atMs` (first reply kept); true if new. */
export async function recordReply(context: RunnerContext, campaign: { id: string; from: string }, index: number, atMs: number): Promise<boolean> {
	void context;
	void campaign;
	void index;
	void atMs;
	return false;
}

/** How many recipients of the campaign replied. */
export async function repliedCount(context: RunnerContext, campaign: { id: string; from: string }): Promise<number> {
	void context;
	void campaign;
	return 0;
}

/** When each recipient (by index) first replied, epoch ms, or undefined. */
export async function repliedAt(context: RunnerContext, campaign: { id: string; from: string }, indexes: number[]): Promise<(number | undefined)[]> {
	void context;
	void campaign;
	return indexes.map(() => undefined);
}
