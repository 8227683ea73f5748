/**
 * A/B tests of templates (#37), the parts that are arithmetic: the seeded split (which recipients
 * are tested, with which variant) and the rule that picks the winner, checked against figures
 * worked out by hand.
 */
import { binomialSpread, parseTestShare, variantOf, type VariantSplit } from '../../runner/src/campaigns/variantSplit';
import { chooseVariant, twoProportionZ } from '../../runner/src/campaigns/variantChoice';

const phones = Array.from({ length: 20_000 }, (_, i) => `1555${String(i).padStart(7, '0')}`);

describe('the split', () => {
	const split: VariantSplit = { seed: 'a1b2c3', share: 0.1, variants: 2 };

	test('the same seed splits the same audience the same way; another seed differently', () => {
		const first = phones.map((phone) => variantOf(split, phone));
		expect(phones.map((phone) => variantOf({ ...split }, phone))).toEqual(first);
		const other = phones.map((phone) => variantOf({ ...split, seed: 'ffee' }, phone));
		expect(other).not.toEqual(first);
	});

	test('the test share and each variant are within the binomial spread of an even split', () => {
		for (const variants of [2, 3, 5]) {
			const counts = new Array<number>(variants).fill(0);
			let tested = 0;
			for (const phone of phones) {
				const variant = variantOf({ ...split, variants }, phone);
				if (variant === undefined) continue;
				tested++;
				counts[variant]++;
			}
			expect(Math.abs(tested - phones.length * 0.1)).toBeLessThan(binomialSpread(phones.length, 0.1));
			for (const count of counts)
				expect(Math.abs(count - (phones.length * 0.1) / variants)).toBeLessThan(
					binomialSpread(phones.length, 0.1 / variants),
				);
		}
	});

	test('test shares as operators write them; others refused naming the field and the rule', () => {
		expect(parseTestShare('20%', 'test_share')).toBe(0.2);
		expect(parseTestShare(' 12.5 % ', 'test_share')).toBe(0.125);
		expect(parseTestShare('0.3', 'test_share')).toBe(0.3);
		for (const bad of ['0%', '95%', '1.5', 'half', '', '-5%'])
			expect(() => parseTestShare(bad, '--test-share')).toThrow(/--test-share must be a share between 1% and 90%/);
	});
});

describe('the winner', () => {
	test('the z of two proportions as worked by hand: 60/100 against 40/100 is 2.83', () => {
		// pooled 0.5; spread sqrt(0.25 × 0.02) = 0.0707; (0.6 − 0.4) / 0.0707 = 2.828
		expect(twoProportionZ({ sent: 100, hits: 60 }, { sent: 100, hits: 40 })).toBeCloseTo(2.828, 3);
		expect(twoProportionZ({ sent: 100, hits: 40 }, { sent: 100, hits: 60 })).toBeCloseTo(-2.828, 3);
		expect(twoProportionZ({ sent: 100, hits: 0 }, { sent: 100, hits: 0 })).toBe(0);
	});

	test('a clear better rate wins; the second variant can win', () => {
		const verdict = chooseVariant(
			[
				{ sent: 100, hits: 40 },
				{ sent: 100, hits: 60 },
			],
			'read',
			50,
		);
		expect(verdict).toMatchObject({ kind: 'winner', variant: 1, criticalZ: 1.96 });
		expect(verdict.comparisons[0].z).toBeCloseTo(2.828, 3);
		expect(verdict.rule).toMatch(/highest read rate wins .* z = 1.96 .* at least 50 recipients per variant/);
	});

	test('a difference chance explains is a tie: 55/100 against 45/100 (z 1.41)', () => {
		const verdict = chooseVariant(
			[
				{ sent: 100, hits: 55 },
				{ sent: 100, hits: 45 },
			],
			'read',
			50,
		);
		expect(verdict).toMatchObject({ kind: 'tie' });
		expect(verdict.kind === 'tie' && verdict.why).toMatch(
			/variant 1 is not ahead of variant 2 beyond chance \(z = 1.41\)/,
		);
	});

	test('equal outcomes are a tie, whatever the size', () => {
		const verdict = chooseVariant(
			[
				{ sent: 1000, hits: 500 },
				{ sent: 1000, hits: 500 },
			],
			'replied',
			100,
		);
		expect(verdict.kind).toBe('tie');
	});

	test('fewer recipients than the minimum is a tie, however large the difference', () => {
		const verdict = chooseVariant(
			[
				{ sent: 30, hits: 30 },
				{ sent: 100, hits: 0 },
			],
			'delivered',
			50,
		);
		expect(verdict).toMatchObject({
			kind: 'tie',
			why: expect.stringMatching(/variant 1 has 30 recipients, fewer than the minimum 50/),
		});
	});

	test('with three variants the best must beat both at the stricter z (2.24)', () => {
		// 60/100 against 40/100 clears 2.24 (2.83); against 47/100 it does not (1.84).
		const results = [
			{ sent: 100, hits: 40 },
			{ sent: 100, hits: 60 },
			{ sent: 100, hits: 47 },
		];
		const verdict = chooseVariant(results, 'read', 50);
		expect(verdict).toMatchObject({ kind: 'tie', criticalZ: 2.2414 });
		results[2].hits = 35;
		expect(chooseVariant(results, 'read', 50)).toMatchObject({ kind: 'winner', variant: 1 });
	});
});
