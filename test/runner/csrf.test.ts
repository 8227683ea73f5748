/**
 * The console's CSRF token is compared in constant time: through node:crypto's timingSafeEqual on
 * equal-length digests, so neither a shorter guess nor the first differing byte answers sooner,
 * and a guess of any length (or none) is refused without an error.
 */
import { timingSafeEqual } from 'node:crypto';

import { Auth } from '../../runner/src/http/auth';
import type { RunnerContext } from '../../runner/src/context';

// The real comparison, watched: every call is seen with its arguments.
jest.mock('node:crypto', () => {
	const actual = jest.requireActual<typeof import('node:crypto')>('node:crypto');
	return { ...actual, timingSafeEqual: jest.fn(actual.timingSafeEqual) };
});
const compare = jest.mocked(timingSafeEqual);

const connection = { defineCommand: () => undefined } as unknown as RunnerContext['redis'];
const auth = new Auth('csrf-test-token-0123456789', connection, {} as RunnerContext['keys'], {
	max: 30,
	periodMs: 60_000,
});
const session = 'session-id.signature';

beforeEach(() => compare.mockClear());

test('the right token passes; a wrong one, one of another length, an empty one and a missing one are refused', () => {
	const right = auth.csrfFor(session);
	expect(auth.csrfOk(session, right)).toBe(true);
	expect(auth.csrfOk(session, `${right.slice(0, -1)}${right.endsWith('A') ? 'B' : 'A'}`)).toBe(false);
	expect(auth.csrfOk(session, right.slice(0, 5))).toBe(false);
	expect(auth.csrfOk(session, `${right}x`)).toBe(false);
	expect(auth.csrfOk(session, '')).toBe(false);
	expect(auth.csrfOk(session, undefined)).toBe(false);
	expect(auth.csrfOk(session, [right, right])).toBe(false);
	expect(auth.csrfOk('another-session.sig', right)).toBe(false);
});

test("every comparison goes through timingSafeEqual with buffers of one length, whatever the guess's length", () => {
	const right = auth.csrfFor(session);
	compare.mockClear();
	for (const guess of [right, right.slice(0, 3), `${right}${right}`, 'x']) auth.csrfOk(session, guess);
	expect(compare).toHaveBeenCalledTimes(4);
	for (const [a, b] of compare.mock.calls) expect((a as Buffer).length).toBe((b as Buffer).length);
});
