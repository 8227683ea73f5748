import { createHmac } from 'node:crypto';

import { SIGNATURE_TOLERANCE_SECONDS, signDelivery, verifyDelivery } from 'convo-contract';

const SECRET = 'whsec-test-0123456789abcdef';
const BODY = JSON.stringify({
	id: 'e1',
	type: 'campaign.finished',
	created_at: '2026-11-22T08:00:00.000Z',
	data: { id: 'c1' },
});
const NOW = 1_800_000_000;

describe('runner event signatures (packages/n8n-nodes-convo/nodes/shared/runner.ts)', () => {
	test('the header is t=<seconds>,v1=<HMAC-SHA256 of "<t>.<body>"> computed independently here', () => {
		const expected = createHmac('sha256', SECRET).update(`${NOW}.${BODY}`).digest('hex');
		expect(signDelivery(SECRET, BODY, NOW)).toBe(`t=${NOW},v1=${expected}`);
	});

	test('a delivery signed with the secret passes, within the tolerance either side', () => {
		expect(verifyDelivery(signDelivery(SECRET, BODY, NOW), BODY, SECRET, NOW)).toEqual({ ok: true, timestamp: NOW });
		const early = signDelivery(SECRET, BODY, NOW - SIGNATURE_TOLERANCE_SECONDS);
		expect(verifyDelivery(early, BODY, SECRET, NOW).ok).toBe(true);
	});

	test.each([
		['another secret', () => signDelivery('whsec-other', BODY, NOW), BODY, /does not match/],
		['a changed body', () => signDelivery(SECRET, BODY, NOW), BODY.replace('c1', 'c2'), /does not match/],
		[
			'a stale timestamp',
			() => signDelivery(SECRET, BODY, NOW - SIGNATURE_TOLERANCE_SECONDS - 1),
			BODY,
			/more than 300 seconds/,
		],
		[
			'a future timestamp',
			() => signDelivery(SECRET, BODY, NOW + SIGNATURE_TOLERANCE_SECONDS + 1),
			BODY,
			/more than 300 seconds/,
		],
		[
			'a timestamp changed after signing',
			() => signDelivery(SECRET, BODY, NOW - 1).replace(`t=${NOW - 1}`, `t=${NOW}`),
			BODY,
			/does not match/,
		],
		['no header', () => undefined, BODY, /missing/],
		['a header sent twice', () => [signDelivery(SECRET, BODY, NOW), signDelivery(SECRET, BODY, NOW)], BODY, /missing/],
		['garbage', () => 'sha256=abc', BODY, /not of the form/],
		['a short hex value', () => `t=${NOW},v1=abcd`, BODY, /does not match/],
	])('%s is refused with a reason', (_name, header, body, reason) => {
		const check = verifyDelivery(header() as string | string[] | undefined, body, SECRET, NOW);
		expect(check.ok).toBe(false);
		if (!check.ok) {
			expect(check.reason).toMatch(reason);
			expect(check.reason).not.toContain(SECRET);
		}
	});

	test('one matching v1 among several passes (a key being rotated)', () => {
		const good = signDelivery(SECRET, BODY, NOW);
		const bad = signDelivery('whsec-old', BODY, NOW).split(',')[1];
		expect(verifyDelivery(`${good},${bad}`, BODY, SECRET, NOW).ok).toBe(true);
		expect(verifyDelivery(`t=${NOW},${bad}`, BODY, SECRET, NOW).ok).toBe(false);
	});
});
