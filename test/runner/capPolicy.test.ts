/**
 * The frequency cap's policy text (#23): what `1/24h,3/7d` means, and the errors a wrong one gets,
 * naming the setting as the user sees it (CLI argument, API field, environment variable).
 */
import { loadConfig } from '../../runner/src/config';
import { parseCapPolicy } from '../../runner/src/capRules';
import { encodeCapPolicy } from '../../runner/src/audience/capPolicy';

test('rules read as at most N per period, every rule holding; none is no cap', () => {
	expect(parseCapPolicy('1/24h, 3/7d', 'policy')).toEqual([
		{ label: '1/24h', count: 1, periodMs: 86_400_000 },
		{ label: '3/7d', count: 3, periodMs: 604_800_000 },
	]);
	expect(encodeCapPolicy(parseCapPolicy('1/24h,3/7d', 'policy'))).toBe('1/24h:1:86400000,3/7d:3:604800000');
	expect(encodeCapPolicy(parseCapPolicy('None', 'policy'))).toBe('none');
	expect(parseCapPolicy('2/90s', 'policy')).toEqual([{ label: '2/90s', count: 2, periodMs: 90_000 }]);
});

test('a wrong policy is refused naming the setting and the rule', () => {
	expect(() => parseCapPolicy('1/24', 'policy')).toThrow(
		'policy: rule 1 must be like 1/24h or 1/24h,3/7d (at most N per period; units s, m, h, d), or none',
	);
	expect(() => parseCapPolicy('1/24h,x', '<policy>')).toThrow('<policy>: rule 2 must be like');
	expect(() => parseCapPolicy('0/1h', 'policy')).toThrow('policy: rule 1 must allow 1 to 100 messages per period');
	expect(() => parseCapPolicy('1/400d', 'policy')).toThrow('policy: rule 1 must have a period of 1s to 366d');
	expect(() => parseCapPolicy('1/24h,2/1d', 'policy')).toThrow('policy has two rules with the same period');
	expect(() => parseCapPolicy('', 'policy')).toThrow('policy must be 1 to 5 rules');
	expect(() => loadConfig({ RUNNER_FREQUENCY_CAP: '1 per day' })).toThrow(
		/RUNNER_FREQUENCY_CAP is wrong: rule 1 must be like 1\/24h/,
	);
	expect(() => loadConfig({ RUNNER_FREQUENCY_CAP: '1/1h,1/2h,1/3h,1/4h,1/5h,1/6h' })).toThrow(
		/RUNNER_FREQUENCY_CAP must be 1 to 5 rules/,
	);
	expect(loadConfig({ RUNNER_FREQUENCY_CAP: '1/24h' }).RUNNER_FREQUENCY_CAP).toBe('1/24h');
	expect(loadConfig({}).RUNNER_FREQUENCY_CAP).toBeUndefined();
});
