/**
 * Which recipients of an A/B test campaign are in its test share, and which variant each gets. A
 * recipient's place is drawn from its phone and the campaign's seed (HMAC-SHA256, the seed as
 * key): the same phone and seed always land alike, so a dry run and the real run split the same
 * audience the same way, a source read twice (a create retried after a crash) splits the same, and
 * the split needs no memory per recipient, whatever the audience's size.
 *
 * The draw is uniform on [0, 1): below the share, the recipient is in the test and the variant is
 * where the draw falls among equal slices of the share; at or above it, the recipient waits for
 * the winner. The test's size and each variant's are binomial around share × audience, which is
 * the "expected noise" a split is judged by (binomialSpread).
 */
import { createHmac, randomBytes } from 'node:crypto';

import { UserError } from '../errors';

/** More variants need a stricter rule per comparison (variantChoice.ts) and tests too large to be useful. */
export const MAX_VARIANTS = 5;

export interface VariantSplit {
	/** Hex; kept with the campaign. */
	seed: string;
	/** The test's share of the accepted audience, in (0, 1). */
	share: number;
	/** How many variants share the test (2 to MAX_VARIANTS). */
	variants: number;
}

/** 48 bits of the draw: exact in a double, and more than any audience needs. */
const DRAW_BITS = 2 ** 48;

/** A new split's seed. */
export function newSeed(): string {
	return randomBytes(16).toString('hex');
}

/** The uniform draw of one phone (its digits) under a seed. */
function drawOf(seed: string, phone: string): number {
	return createHmac('sha256', seed).update(phone).digest().readUIntBE(0, 6) / DRAW_BITS;
}

/** The variant (0-based) a phone is sent in the test, or undefined when it waits for the winner. */
export function variantOf(split: VariantSplit, phone: string): number | undefined {
	const draw = drawOf(split.seed, phone);
	if (draw >= split.share) return undefined;
	return Math.min(split.variants - 1, Math.floor((draw / split.share) * split.variants));
}

/**
 * A test share as the operator writes it: `20%`, or a fraction `0.2`. The remainder must keep
 * someone to send the winner to, and the test someone to compare: between 1% and 90%.
 */
export function parseTestShare(text: string, field: string): number {
	const trimmed = text.trim();
	const percent = /^(\d+(?:\.\d+)?)\s*%$/.exec(trimmed);
	const value = percent ? Number(percent[1]) / 100 : /^0?\.\d+$/.test(trimmed) ? Number(trimmed) : NaN;
	if (!Number.isFinite(value) || value < 0.01 || value > 0.9)
		throw new UserError(
			`${field} must be a share between 1% and 90% (for example 20% or 0.2); got ${JSON.stringify(text)}`,
		);
	return value;
}

/**
 * How far a variant's count may stray from an even split by chance alone: three standard
 * deviations of its binomial count (n draws, each in the variant with probability p), about 99.7%
 * of draws.
 */
export function binomialSpread(n: number, p: number): number {
	return 3 * Math.sqrt(n * p * (1 - p));
}
