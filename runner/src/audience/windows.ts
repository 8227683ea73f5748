/**
 * Send windows in the recipient's local time: the `--window` syntax, each recipient's time
 * zone, and when a zone's window is open. A recipient's zone is its row's `tz` column (an IANA
 * name) or else its phone's country (libphonenumber-js) and that country's zones
 * (countries-and-timezones). A country with several zones is open only while the window is open
 * in every one of them (docs/decisions/audience/send-window-recipient-zone.md); Intl gives each
 * zone's local time, so daylight saving time follows the zone's own rules.
 *
 * Syntax: `09:00-20:00` (every day), or comma-separated day groups,
 * `mon-fri 09:00-20:00, sat 10:00-14:00` (a day not named is closed). Times are HH:MM, or
 * HH:MM:SS; a window ends after it starts, within the day.
 */
import { getCountry } from 'countries-and-timezones';
import { parsePhoneNumberFromString } from 'libphonenumber-js';

const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
const DAY_SECONDS = 86_400;

/**
 * The open time of each weekday (0 Monday .. 6 Sunday) in seconds of the local day: [start, end), or null when closed.
 */
export type WeekWindow = Array<[number, number] | null>;

export class WindowSyntaxError extends Error {}

const SYNTAX = 'write HH:MM-HH:MM, or day groups like "mon-fri 09:00-20:00, sat 10:00-14:00"';

function timeOfDay(text: string): number | undefined {
	const match = /^(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(text);
	if (!match) return undefined;
	const [hours, minutes, seconds] = [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)];
	if (minutes > 59 || seconds > 59 || hours > 24 || (hours === 24 && (minutes > 0 || seconds > 0))) return undefined;
	return hours * 3600 + minutes * 60 + seconds;
}

function openHours(text: string): [number, number] {
	const [from, to, extra] = text.split('-');
	const start = from === undefined ? undefined : timeOfDay(from);
	const end = to === undefined ? undefined : timeOfDay(to);
	if (extra !== undefined || start === undefined || end === undefined)
		throw new WindowSyntaxError(`"${text}" is not a time range: ${SYNTAX}`);
	if (end <= start)
		throw new WindowSyntaxError(
			`${text} ends before it starts: a window lies within one day (split a night window into two day groups)`,
		);
	return [start, end];
}

function days(text: string): number[] {
	const [first, last, extra] = text.split('-');
	const from = DAYS.indexOf(first as (typeof DAYS)[number]);
	const to = last === undefined ? from : DAYS.indexOf(last as (typeof DAYS)[number]);
	if (extra !== undefined || from < 0 || to < 0)
		throw new WindowSyntaxError(`"${text}" is not a day or a range of days: use ${DAYS.join(' ')} (mon-fri, sat)`);
	if (to < from) throw new WindowSyntaxError(`${text} runs backwards: a range goes from mon towards sun`);
	return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

/** Parses the window's text (the messages name no setting: the caller adds its own name). */
export function parseWindow(text: string): WeekWindow {
	const trimmed = text.trim().toLowerCase();
	if (trimmed === '') throw new WindowSyntaxError(`is empty: ${SYNTAX}`);
	const week: WeekWindow = DAYS.map(() => null);
	const groups = trimmed.split(',').map((group) => group.trim());
	if (groups.length === 1 && !/\s/.test(groups[0])) {
		const every = openHours(groups[0]);
		return week.map(() => every);
	}
	for (const group of groups) {
		const [dayText, hoursText, ...rest] = group.split(/\s+/);
		if (hoursText === undefined || rest.length > 0)
			throw new WindowSyntaxError(`"${group}" is not a day group: ${SYNTAX}`);
		const open = openHours(hoursText);
		for (const day of days(dayText)) {
			if (week[day]) throw new WindowSyntaxError(`${DAYS[day]} is named twice`);
			week[day] = open;
		}
	}
	return week;
}

const clock = (second: number) => {
	const text = [Math.floor(second / 3600), Math.floor(second / 60) % 60]
		.map((part) => String(part).padStart(2, '0'))
		.join(':');
	return second % 60 ? `${text}:${String(second % 60).padStart(2, '0')}` : text;
};

/** A window as parseWindow reads it: `09:00-20:00` when every day is the same, else day groups. */
export function describeWindow(week: WeekWindow): string {
	const dayHours = week.map((open) => (open ? `${clock(open[0])}-${clock(open[1])}` : ''));
	if (dayHours.every((text) => text !== '' && text === dayHours[0])) return dayHours[0];
	const groups: string[] = [];
	for (let day = 0; day < 7; ) {
		let last = day;
		while (last + 1 < 7 && dayHours[last + 1] === dayHours[day]) last++;
		if (dayHours[day] !== '') groups.push(`${DAYS[day]}${last > day ? `-${DAYS[last]}` : ''} ${dayHours[day]}`);
		day = last + 1;
	}
	return groups.join(', ');
}

/** The stored form of a window: its weekdays' open hours, compact (the campaign hash keeps it). */
export const encodeWindow = (week: WeekWindow) => JSON.stringify(week);
export const decodeWindow = (text: string) => JSON.parse(text) as WeekWindow;

/** Formatters per zone: building one is costly, using it is not. */
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
	let found = formatters.get(zone);
	if (!found) {
		found = new Intl.DateTimeFormat('en-US', {
			timeZone: zone,
			hourCycle: 'h23',
			weekday: 'short',
			hour: '2-digit',
			minute: '2-digit',
			second: '2-digit',
		});
		formatters.set(zone, found);
	}
	return found;
}

/** True for a time zone name Intl knows (IANA names such as Europe/Berlin). */
function isTimeZone(name: string): boolean {
	try {
		formatter(name);
		return true;
	} catch {
		return false;
	}
}

const WEEKDAY: Record<string, number> = { Mon: 0, Tue: 1, Wed: 2, Thu: 3, Fri: 4, Sat: 5, Sun: 6 };

/** The weekday (0 Monday) and the second of the day at `ms` in `zone`. */
function localTime(zone: string, ms: number): { day: number; second: number } {
	const parts = Object.fromEntries(
		formatter(zone)
			.formatToParts(new Date(ms))
			.map((part) => [part.type, part.value]),
	);
	return {
		day: WEEKDAY[parts.weekday],
		second: Number(parts.hour) * 3600 + Number(parts.minute) * 60 + Number(parts.second),
	};
}

/** The opening of one zone that holds `ms`: [opened, closes) in epoch ms, or undefined while closed. */
function zoneOpening(week: WeekWindow, zone: string, ms: number): [number, number] | undefined {
	const { day, second } = localTime(zone, ms);
	const open = week[day];
	if (!open || second < open[0] || second >= open[1]) return undefined;
	const whole = ms - (ms % 1000);
	return [whole - (second - open[0]) * 1000, whole + (open[1] - second) * 1000];
}

/**
 * A recipient's zone: an IANA name, or `country:XX` for a country with several zones, whose
 * window is the intersection of its zones' (zonesOf).
 */
export type ZoneKey = string;
/** A windowed campaign's zones as its hash keeps them (`zones`): [zone key, recipients, chunks] by zone number. */
export type ZoneTable = Array<[ZoneKey, number, number]>;

function zonesOf(key: ZoneKey): string[] {
	return key.startsWith('country:') ? (getCountry(key.slice('country:'.length))?.timezones ?? []) : [key];
}

/**
 * The opening that holds `ms` for a zone key: open in all of its
 * zones (the latest opening, the earliest close), or undefined.
 */
export function openingAt(week: WeekWindow, key: ZoneKey, ms: number): [number, number] | undefined {
	let opening: [number, number] | undefined;
	for (const zone of zonesOf(key)) {
		const each = zoneOpening(week, zone, ms);
		if (!each) return undefined;
		opening = opening ? [Math.max(opening[0], each[0]), Math.min(opening[1], each[1])] : each;
	}
	return opening;
}

/**
 * Steps a week is looked at in to learn whether a zone key is
 * ever open (15 minutes: offsets are whole quarters of an hour).
 */
const WEEK_STEP_MS = 15 * 60_000;

/** True when the window is open in every zone of `key` at some moment of the week after `from`. */
function everOpen(week: WeekWindow, key: ZoneKey, from: number): boolean {
	for (let at = from; at < from + 7 * DAY_SECONDS * 1000; at += WEEK_STEP_MS) if (openingAt(week, key, at)) return true;
	return false;
}

export type ZoneVerdict = { ok: true; key: ZoneKey } | { ok: false; reason: string };

/**
 * Tells the zones of a campaign's recipients, remembering each country's verdict (a country is
 * looked up once per create however many rows it has).
 */
export class ZoneFinder {
	private readonly countries = new Map<string, ZoneVerdict>();
	private readonly named = new Map<string, ZoneVerdict>();

	constructor(
		private readonly week: WeekWindow,
		private readonly now: number,
	) {}

	/** `tz`: the row's tz column (any text from the file), or undefined. Reasons never quote it. */
	zoneOf(phoneDigits: string, tz: unknown): ZoneVerdict {
		if (tz !== undefined && tz !== null && String(tz).trim() !== '') {
			const name = String(tz).trim();
			let verdict = this.named.get(name);
			if (!verdict) {
				verdict = isTimeZone(name)
					? { ok: true, key: name }
					: {
							ok: false,
							reason: 'tz is not a time zone: write an IANA name such as Europe/Berlin or America/New_York',
						};
				if (this.named.size < 1000) this.named.set(name, verdict);
			}
			return verdict;
		}
		const country = parsePhoneNumberFromString(`+${phoneDigits}`)?.country;
		if (!country)
			return {
				ok: false,
				reason:
					'phone has no country the send window can tell its time zone from: ' +
					'add a tz column (an IANA name such as Europe/Berlin)',
			};
		let verdict = this.countries.get(country);
		if (!verdict) {
			const zones = getCountry(country)?.timezones ?? [];
			if (zones.length === 0)
				verdict = {
					ok: false,
					reason:
						`phone's country (${country}) has no known time zone: ` +
						'add a tz column (an IANA name such as Europe/Berlin)',
				};
			else if (zones.length === 1) verdict = { ok: true, key: zones[0] };
			else {
				const key = `country:${country}`;
				verdict = everOpen(this.week, key, this.now)
					? { ok: true, key }
					: {
							ok: false,
							reason:
								`phone's country (${country}) spans ${zones.length} time zones and the send window is never open ` +
								'in all of them at once: add a tz column (an IANA name such as America/New_York)',
						};
			}
			this.countries.set(country, verdict);
		}
		return verdict;
	}
}

/**
 * The next opening at or after `ms` for a zone key (searched in WEEK_STEP_MS steps over a week,
 * then to the second): what a dry run's estimate walks, and what a test send held by the window
 * is told. Undefined when it never opens.
 */
export function nextOpening(week: WeekWindow, key: ZoneKey, ms: number): [number, number] | undefined {
	const now = openingAt(week, key, ms);
	if (now) return now;
	for (let at = ms - (ms % WEEK_STEP_MS) + WEEK_STEP_MS; at < ms + 8 * DAY_SECONDS * 1000; at += WEEK_STEP_MS) {
		const found = openingAt(week, key, at);
		if (found) return [Math.max(ms, found[0]), found[1]];
	}
	return undefined;
}

/**
 * How far ahead a dry run's estimate looks for openings: recipients not sendable by then are left out of its duration.
 */
const ESTIMATE_HORIZON_MS = 31 * DAY_SECONDS * 1000;

/**
 * A dry run's estimate of a campaign sent at `rate`, starting at `startsAt` (ms on the campaign's
 * clock): zones ([key, recipients]) are sent as the feeder sends them, zone by zone while open,
 * the number's rate shared; without a window every recipient is open at once. Answers when the
 * last send would be, and how many the end (`endAt`) would leave unsent (they would expire).
 */
export function estimateSends(input: {
	rate: number;
	startsAt: number;
	accepted: number;
	week?: WeekWindow;
	zones?: Array<[ZoneKey, number]>;
	endAt?: number;
}): { endsAt: number; expired: number } {
	const { rate, startsAt, endAt } = input;
	const stop = Math.min(endAt ?? Infinity, startsAt + ESTIMATE_HORIZON_MS);
	const { week } = input;
	if (!week) {
		const sendable =
			endAt === undefined ? input.accepted : Math.min(input.accepted, Math.floor(((endAt - startsAt) / 1000) * rate));
		return { endsAt: startsAt + Math.ceil(sendable / rate) * 1000, expired: input.accepted - sendable };
	}
	const left = (input.zones ?? []).map(([key, count]) => ({ key, count }));
	let at = startsAt;
	let endsAt = startsAt;
	while (at < stop) {
		const open = left
			.filter((zone) => zone.count > 0)
			.map((zone) => ({ zone, opening: nextOpening(week, zone.key, at) }));
		if (open.length === 0) break;
		// The next moment something changes: the earliest close of a zone open now, or the earliest opening.
		const now = open.filter((each) => each.opening && each.opening[0] <= at);
		const later = open.flatMap((each) => (each.opening && each.opening[0] > at ? [each.opening[0]] : []));
		if (now.length === 0) {
			if (later.length === 0) break;
			at = Math.min(...later);
			continue;
		}
		const until = Math.min(stop, ...now.map((each) => (each.opening as [number, number])[1]), ...later);
		let room = Math.floor(((until - at) / 1000) * rate);
		let spent = 0;
		for (const { zone } of now) {
			const sent = Math.min(zone.count, room);
			zone.count -= sent;
			room -= sent;
			spent += sent;
		}
		if (spent > 0) endsAt = at + Math.ceil(spent / rate) * 1000;
		at = until;
	}
	return { endsAt, expired: endAt === undefined ? 0 : left.reduce((sum, zone) => sum + zone.count, 0) };
}
