import { DateTime } from 'luxon';

/** Why a time given without an offset names no instant; the caller names the field. */
export class LocalTimeError extends Error {
	constructor(
		message: string,
		readonly hint: string,
	) {
		super(message);
	}
}

const WALL_CLOCK = "yyyy-MM-dd'T'HH:mm:ss.SSS";

/**
 * A wall-clock time ("2026-03-01T09:00:00") in `timeZone`, as a UTC instant, by the zone's rules
 * on that day (luxon). A time the clocks skip when they jump forward is refused: it names no
 * instant, and moving it would start or end a campaign at a time nobody gave. A time the clocks
 * show twice when they go back is its first occurrence
 * (docs/decisions/nodes/start-time-on-daylight-saving-days.md).
 */
export function zonedInstant(local: string, timeZone: string): Date {
	const wallClock = DateTime.fromISO(local, { zone: 'utc' });
	if (!wallClock.isValid)
		throw new LocalTimeError('is not a date and time', 'Give an ISO date and time such as 2026-03-01T09:00:00');
	const zoned = DateTime.fromISO(local, { zone: timeZone });
	if (!zoned.isValid)
		throw new LocalTimeError(
			`cannot be read in the time zone ${timeZone} (${zoned.invalidReason ?? 'unknown zone'})`,
			"Set the workflow's time zone to an IANA name such as Europe/Berlin, or give the time with an offset",
		);
	if (zoned.toFormat(WALL_CLOCK) !== wallClock.toFormat(WALL_CLOCK)) {
		throw new LocalTimeError(
			`does not exist in ${timeZone}: the clocks jump forward past it that day`,
			`Give a time the clocks show that day, such as ${zoned.toFormat('HH:mm')}, ` +
				`or a time with an offset such as ${zoned.toISO({ suppressMilliseconds: true })}`,
		);
	}
	const first = Math.min(...zoned.getPossibleOffsets().map((candidate) => candidate.toMillis()));
	return new Date(first);
}
