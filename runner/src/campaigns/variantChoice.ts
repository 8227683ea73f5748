/**
 * The rule that picks an A/B test's winner, stated so an operator can check it by hand: each
 * variant's rate is what the test measures (delivered, read or replied) over the recipients the
 * service accepted; the best rate wins when a two-proportion z-test (pooled) against every other
 * variant clears the critical value at 95% confidence, Bonferroni-corrected for the comparisons,
 * and every variant has at least the minimum recipients. Otherwise it is a tie, and the campaign's
 * `if_tie` decides: send the first variant, or wait for the operator.
 */
import { MAX_VARIANTS } from './variantSplit';

export type PickBy = 'delivered' | 'read' | 'replied';
export const PICK_BY: readonly PickBy[] = ['delivered', 'read', 'replied'];

export interface VariantResult {
	/** How many of the variant's recipients the service accepted: the rate's denominator. */
	sent: number;
	/** How many of those were delivered, read or replied, as the test measures. */
	hits: number;
}

interface VariantComparison {
	variant: number;
	rate: number;
	/** The z of the winner candidate against this variant (absent for the candidate itself). */
	z?: number;
}

export type VariantVerdict =
	| { kind: 'winner'; variant: number; comparisons: VariantComparison[]; criticalZ: number; rule: string }
	| { kind: 'tie'; why: string; comparisons: VariantComparison[]; criticalZ: number; rule: string };

/**
 * Two-sided critical z at 95% confidence divided over k − 1 comparisons (Bonferroni):
 * the normal quantile of 1 − 0.05 / (2 (k − 1)), for k = 2 to MAX_VARIANTS.
 */
const CRITICAL_Z: Record<number, number> = { 2: 1.96, 3: 2.2414, 4: 2.394, 5: 2.4977 };

/** The pooled two-proportion z of a over b (positive: a's rate is higher); 0 when neither varies. */
export function twoProportionZ(a: VariantResult, b: VariantResult): number {
	if (a.sent === 0 || b.sent === 0) return 0;
	const pooled = (a.hits + b.hits) / (a.sent + b.sent);
	const spread = Math.sqrt(pooled * (1 - pooled) * (1 / a.sent + 1 / b.sent));
	if (spread === 0) return 0;
	return (a.hits / a.sent - b.hits / b.sent) / spread;
}

export function ruleText(pickBy: PickBy, minimum: number, variants: number): string {
	return (
		`the highest ${pickBy} rate wins when a two-proportion z-test against every other variant exceeds ` +
		`z = ${CRITICAL_Z[variants]} (95% confidence over ${variants - 1} comparison${variants === 2 ? '' : 's'}), ` +
		`with at least ${minimum} recipients per variant`
	);
}

/** The verdict on the variants' results (in variant order), at least `minimum` recipients each. */
export function chooseVariant(results: VariantResult[], pickBy: PickBy, minimum: number): VariantVerdict {
	const k = results.length;
	if (k < 2 || k > MAX_VARIANTS) throw new Error(`an A/B test has 2 to ${MAX_VARIANTS} variants, not ${k}`);
	const criticalZ = CRITICAL_Z[k];
	const rule = ruleText(pickBy, minimum, k);
	const rates = results.map((result) => (result.sent === 0 ? 0 : result.hits / result.sent));
	// The first of equal best rates is the candidate: a tie then stays a tie on the z-test.
	const best = rates.reduce((top, rate, i) => (rate > rates[top] ? i : top), 0);
	const comparisons: VariantComparison[] = results.map((result, i) => ({
		variant: i,
		rate: rates[i],
		...(i === best ? {} : { z: twoProportionZ(results[best], result) }),
	}));
	const short = results.findIndex((result) => result.sent < minimum);
	if (short >= 0)
		return {
			kind: 'tie',
			why: `variant ${short + 1} has ${results[short].sent} recipients, fewer than the minimum ${minimum}`,
			comparisons,
			criticalZ,
			rule,
		};
	const close = comparisons.find((comparison) => comparison.z !== undefined && comparison.z <= criticalZ);
	if (close)
		return {
			kind: 'tie',
			why:
				`variant ${best + 1} is not ahead of variant ${close.variant + 1} ` +
				`beyond chance (z = ${close.z?.toFixed(2)})`,
			comparisons,
			criticalZ,
			rule,
		};
	return { kind: 'winner', variant: best, comparisons, criticalZ, rule };
}
