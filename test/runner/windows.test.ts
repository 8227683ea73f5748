/**
 * The send window's rules without Redis (#23, audience/windows.ts): its syntax and errors, each
 * recipient's zone (a tz column, the phone's country, a country of several zones), when a zone is
 * open (daylight saving time included), and a dry run's estimate across windows and an end.
 */
import { describeWindow, estimateSends, openingAt, parseWindow, ZoneFinder } from '../../runner/src/audience/windows';
import { loadConfig } from '../../runner/src/config';

const HOURS = (h: number, m = 0) => (h * 60 + m) * 60;
const DAY = parseWindow('09:00-20:00');
const at = (iso: string) => Date.parse(iso);

test('the syntax: every day, day groups, seconds; a day not named is closed; shown back as it reads', () => {
	expect(DAY).toEqual(Array(7).fill([HOURS(9), HOURS(20)]));
	expect(describeWindow(DAY)).toBe('09:00-20:00');
	expect(describeWindow(parseWindow('sat 10:00-14:00, mon-fri 09:00-20:00, sun 10:00:30-11:00'))).toBe(
		'mon-fri 09:00-20:00, sat 10:00-14:00, sun 10:00:30-11:00',
	);
	expect(parseWindow('mon-fri 09:00-20:00, sat 10:00-14:00')).toEqual([
		...Array(5).fill([HOURS(9), HOURS(20)]),
		[HOURS(10), HOURS(14)],
		null,
	]);
	expect(parseWindow('SUN 00:00:30-24:00')[6]).toEqual([30, HOURS(24)]);
});

test.each([
	['', 'is empty'],
	['9-20', 'is not a time range'],
	['20:00-09:00', 'ends before it starts'],
	['09:60-10:00', 'is not a time range'],
	['mon-fri 09:00-20:00, fri 10:00-11:00', 'fri is named twice'],
	['fri-mon 09:00-10:00', 'runs backwards'],
	['xyz 09:00-10:00', 'is not a day or a range of days'],
	['mon 09:00-10:00 extra', 'is not a day group'],
])('%j is refused: %s', (text, message) => {
	expect(() => parseWindow(text)).toThrow(message);
});

test('a zone from the tz column, else from the phone country; a bad tz is refused without quoting it', () => {
	const zones = new ZoneFinder(DAY, at('2030-01-15T12:00:00Z'));
	expect(zones.zoneOf('2348031234567', undefined)).toEqual({ ok: true, key: 'Africa/Lagos' });
	expect(zones.zoneOf('9779812345678', '')).toEqual({ ok: true, key: 'Asia/Kathmandu' });
	expect(zones.zoneOf('2348031234567', ' Asia/Tokyo ')).toEqual({ ok: true, key: 'Asia/Tokyo' });
	const bad = zones.zoneOf('2348031234567', 'Mars/Olympus');
	expect(bad).toEqual({ ok: false, reason: expect.stringContaining('tz is not a time zone') });
	expect(JSON.stringify(bad)).not.toContain('Mars');
});

test('a country of several zones is open only where all of them are; one where that never happens asks for a tz column', () => {
	const zones = new ZoneFinder(DAY, at('2030-01-15T12:00:00Z'));
	expect(zones.zoneOf('5581912345678', undefined)).toEqual({ ok: true, key: 'country:BR' });
	// Brazil runs from -5 (Rio Branco) to -2 (Noronha): 09:00 in Rio Branco is 14:00 UTC, 20:00 in Noronha 22:00 UTC.
	expect(openingAt(DAY, 'country:BR', at('2030-01-15T13:59:59Z'))).toBeUndefined();
	expect(openingAt(DAY, 'country:BR', at('2030-01-15T14:00:00Z'))).toEqual([
		at('2030-01-15T14:00:00Z'),
		at('2030-01-15T22:00:00Z'),
	]);
	// Russia spans ten hours: a one-hour window is never open in all of it.
	const narrow = new ZoneFinder(parseWindow('09:00-10:00'), at('2030-01-15T12:00:00Z'));
	expect(narrow.zoneOf('79161234567', undefined)).toEqual({
		ok: false,
		reason: expect.stringMatching(/country \(RU\) spans \d+ time zones .* add a tz column/),
	});
});

test('local time follows daylight saving time: 09:00 in New York is 14:00 UTC in January, 13:00 in July', () => {
	expect(openingAt(DAY, 'America/New_York', at('2030-01-15T13:59:00Z'))).toBeUndefined();
	expect(openingAt(DAY, 'America/New_York', at('2030-01-15T14:00:00Z'))?.[0]).toBe(at('2030-01-15T14:00:00Z'));
	expect(openingAt(DAY, 'America/New_York', at('2030-07-15T13:00:00Z'))?.[0]).toBe(at('2030-07-15T13:00:00Z'));
});

test('the estimate waits for each zone to open and counts who the end leaves unsent', () => {
	const startsAt = at('2030-01-15T12:00:00Z');
	// Lagos open now (13:00 there), Tokyo closed until 00:00 UTC: 100 in Lagos take 100 s; Tokyo's 50 wait 12 h.
	const zones: Array<[string, number]> = [
		['Africa/Lagos', 100],
		['Asia/Tokyo', 50],
	];
	expect(estimateSends({ rate: 1, startsAt, accepted: 150, week: DAY, zones })).toEqual({
		endsAt: at('2030-01-16T00:00:50Z'),
		expired: 0,
	});
	expect(
		estimateSends({ rate: 1, startsAt, accepted: 150, week: DAY, zones, endAt: at('2030-01-15T18:00:00Z') }),
	).toEqual({ endsAt: startsAt + 100_000, expired: 50 });
	// Without a window: the rate alone.
	expect(estimateSends({ rate: 2, startsAt, accepted: 100, endAt: startsAt + 30_000 })).toEqual({
		endsAt: startsAt + 30_000,
		expired: 40,
	});
});

test('the test clock is refused in a production environment', () => {
	expect(() => loadConfig({ RUNNER_TEST_CLOCK_OFFSET_MS: '1000', NODE_ENV: 'production' })).toThrow(
		/RUNNER_TEST_CLOCK_OFFSET_MS is for tests only/,
	);
	expect(loadConfig({ RUNNER_TEST_CLOCK_OFFSET_MS: '-1000' }).RUNNER_TEST_CLOCK_OFFSET_MS).toBe(-1000);
});
