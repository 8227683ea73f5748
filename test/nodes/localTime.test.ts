/**
 * Start Time and End Time without an offset, read in the workflow's time zone around both
 * daylight-saving changes of two zones (Europe/Berlin, America/New_York): a time that exists once
 * is that instant, one the clocks skip is refused naming why, one they show twice is its first
 * occurrence (docs/decisions/nodes/start-time-on-daylight-saving-days.md).
 */
import { LocalTimeError, zonedInstant } from '../../packages/n8n-nodes-convo/nodes/Convo/actions/campaign/localTime';

const at = (local: string, zone: string) => zonedInstant(local, zone).toISOString();
function refusalOf(local: string, zone: string): LocalTimeError | undefined {
	try {
		zonedInstant(local, zone);
		return undefined;
	} catch (error) {
		return error as LocalTimeError;
	}
}

describe.each([
	{
		zone: 'Europe/Berlin',
		spring: {
			before: ['2026-03-29T01:30', '2026-03-29T00:30:00.000Z'],
			skipped: '2026-03-29T02:30',
			after: ['2026-03-29T03:30', '2026-03-29T01:30:00.000Z'],
			shifted: '03:30',
		},
		autumn: {
			before: ['2026-10-25T01:30', '2026-10-24T23:30:00.000Z'],
			twice: ['2026-10-25T02:30', '2026-10-25T00:30:00.000Z'],
			after: ['2026-10-25T03:30', '2026-10-25T02:30:00.000Z'],
		},
	},
	{
		zone: 'America/New_York',
		spring: {
			before: ['2027-03-14T01:30', '2027-03-14T06:30:00.000Z'],
			skipped: '2027-03-14T02:30',
			after: ['2027-03-14T03:30', '2027-03-14T07:30:00.000Z'],
			shifted: '03:30',
		},
		autumn: {
			before: ['2027-11-07T00:30', '2027-11-07T04:30:00.000Z'],
			twice: ['2027-11-07T01:30', '2027-11-07T05:30:00.000Z'],
			after: ['2027-11-07T02:30', '2027-11-07T07:30:00.000Z'],
		},
	},
])('$zone', ({ zone, spring, autumn }) => {
	test('spring forward: the hour before and after the gap are theirs; a time in the gap is refused', () => {
		expect(at(spring.before[0], zone)).toBe(spring.before[1]);
		expect(at(spring.after[0], zone)).toBe(spring.after[1]);
		const refusal = refusalOf(spring.skipped, zone);
		expect(refusal).toBeInstanceOf(LocalTimeError);
		expect(refusal?.message).toBe(`does not exist in ${zone}: the clocks jump forward past it that day`);
		expect(refusal?.hint).toContain(`such as ${spring.shifted}`);
	});
	test('fall back: the hour shown twice is its first occurrence; the hours around it are theirs', () => {
		expect(at(autumn.before[0], zone)).toBe(autumn.before[1]);
		expect(at(autumn.twice[0], zone)).toBe(autumn.twice[1]);
		expect(at(autumn.after[0], zone)).toBe(autumn.after[1]);
	});
});

test('seconds are read; what is no date and time, or no zone, is refused', () => {
	expect(at('2026-07-01T09:15:30', 'Europe/Berlin')).toBe('2026-07-01T07:15:30.000Z');
	expect(() => zonedInstant('tomorrow', 'Europe/Berlin')).toThrow('is not a date and time');
	expect(() => zonedInstant('2026-07-01T09:00', 'Mars/Olympus')).toThrow(
		'cannot be read in the time zone Mars/Olympus',
	);
});
