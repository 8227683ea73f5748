// @serial: measures send windows and the send rate in every sliding second
/**
 * Send windows in the recipient's local time, and a campaign's end (#23). One campaign with a
 * 09:00-20:00 window to recipients in +1 (Nigeria: Africa/Lagos), +5:45 (Nepal: Asia/Kathmandu),
 * +9 (Japan: Asia/Tokyo), +6 (a `tz` column: Asia/Dhaka) and Brazil (a country of several zones,
 * -5 to -2: open only while open in all of them, 14:00 to 22:00 UTC), at 20/s, against a runner
 * process and the sandbox.
 *
 * The clock: RUNNER_TEST_CLOCK_OFFSET_MS (test-only; refused with NODE_ENV=production) moves the
 * clock the runner reads windows and ends on, in its processes and in the claim's script alike
 * (the campaign keeps the offset it was created with). The windowed campaign is created on a
 * context whose clock stands 8 s before 14:00 UTC on a fixed day, so within seconds Dhaka's window
 * closes (14:00 UTC = 20:00 there) and Brazil's opens (14:00 UTC = 09:00 in Rio Branco), Lagos and
 * Kathmandu are open throughout and Tokyo (23:00) never opens. Every check is by the SANDBOX's own
 * log: each message's recorded time plus the same offset, converted to its recipient's local time
 * with Intl (not the runner's window code).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { API_NAMES, createCampaign, campaignStatus } from '../../runner/src/core/campaigns';
import { loadConfig } from '../../runner/src/config';
import { createLogger } from '../../runner/src/log';
import { closeContext, openContext } from '../../runner/src/runtime';
import {
	expectBusiestAtMost,
	positionalTemplate,
	report,
	startRunnerUnderTest,
	templateSends,
	useRedisServer,
	waitFor,
	type RunnerUnderTest,
	type SandboxMessage,
} from './support';

jest.setTimeout(120_000);

const RATE = 20;
/** Where the test puts the runner's clock when the runner starts (the dry run and the end's test read it). */
const FAKE_START = Date.parse('2030-01-15T13:59:30Z');
const CLOSE_AND_OPEN = Date.parse('2030-01-15T14:00:00Z');
/**
 * The windowed campaign's clock at its create: this long before 14:00 UTC. At RATE, Dhaka's 200 take
 * 10 s, and claims stop 2 s before a close (spacing.ts): at most 160 go, so its window closes on
 * recipients still waiting, and a runner slow to start on a loaded machine still sends there.
 */
const LEAD_MS = 10_000;
/** Its end, this long after 14:00 UTC: what opens or stays open then (about 100 sends, 5 s at RATE) fits with room. */
const AFTER_MS = 8000;

let redis: Awaited<ReturnType<typeof useRedisServer>>;
let runner: RunnerUnderTest;
let offset: number;

beforeAll(async () => {
	redis = await useRedisServer();
	offset = FAKE_START - Date.now();
	runner = await startRunnerUnderTest(redis.url, { RUNNER_TEST_CLOCK_OFFSET_MS: String(offset) });
	runner.spawnWorker();
});
afterAll(async () => {
	await runner?.close();
	await redis?.stop();
});

const phones = (prefix: string, count: number) =>
	Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(4, '0')}`);
const ZONES = {
	lagos: phones('234803123', 30),
	kathmandu: phones('977981234', 30),
	tokyo: phones('8190123', 20),
	dhaka: phones('4917012', 200),
	brazil: phones('5581912', 40),
};

/** Hour, minute and second of `ms` in `zone`, as seconds of the day: Intl, independently of the runner's code. */
function secondOfDay(zone: string, ms: number): number {
	const parts = Object.fromEntries(
		new Intl.DateTimeFormat('en-US', {
			timeZone: zone,
			hourCycle: 'h23',
			hour: '2-digit',
			minute: '2-digit',
			second: '2-digit',
		})
			.formatToParts(new Date(ms))
			.map((part) => [part.type, part.value]),
	);
	return Number(parts.hour) * 3600 + Number(parts.minute) * 60 + Number(parts.second);
}

const OPEN = [9 * 3600, 20 * 3600];
const BRAZIL_ZONES = ['America/Rio_Branco', 'America/Manaus', 'America/Sao_Paulo', 'America/Noronha'];

test('a 09:00-20:00 window across +1, +5:45, +6, +9 and Brazil: nothing arrives outside its window, the rate holds, the unsent expire at the end', async () => {
	// Dhaka's rows first: the queue has far more of them fed than 5/s can send before 20:00 there.
	const lines = [
		'phone,tz,1,2',
		...ZONES.dhaka.map((phone) => `+${phone},Asia/Dhaka,a,b`),
		...[...ZONES.lagos, ...ZONES.kathmandu, ...ZONES.tokyo, ...ZONES.brazil].map((phone) => `+${phone},,a,b`),
		'+4917099999999,Mars/Olympus,a,b',
	];
	const dir = mkdtempSync(join(tmpdir(), 'convo-windows-'));
	writeFileSync(join(dir, 'audience.csv'), `${lines.join('\n')}\n`);
	const endAt = new Date(CLOSE_AND_OPEN + AFTER_MS).toISOString();
	// The clock taken at the last moment: the boundary is LEAD_MS away, not what the runner's start took.
	const campaignOffset = CLOSE_AND_OPEN - LEAD_MS - Date.now();
	const context = await openContext(
		loadConfig({ ...runner.env, RUNNER_TEST_CLOCK_OFFSET_MS: String(campaignOffset) }),
		createLogger('silent'),
		{ withService: true },
	);
	const created = await createCampaign(context, {
		templateId: positionalTemplate(runner.business).id,
		from: runner.business.phoneNumbers[0],
		source: join(dir, 'audience.csv'),
		rate: RATE,
		window: '09:00-20:00',
		endAt,
	}).finally(() => closeContext(context));
	if (created.kind !== 'campaign') throw new Error('expected a campaign');
	// The premise: the campaign starts before Dhaka's close, with seconds left to send there.
	expect(Date.now() + campaignOffset).toBeLessThan(CLOSE_AND_OPEN - 5000);
	expect(created.rejections).toEqual([
		{ line: lines.length, phone: '+4917099999999', reason: expect.stringContaining('tz is not a time zone') },
	]);

	await waitFor(
		'the campaign to complete',
		async () => (await campaignStatus(runner.context, created.id)).state === 'completed',
		60_000,
		500,
	);

	const sends = (await templateSends(runner.sandbox)).filter(
		(message) => message.from === runner.business.phoneNumbers[0],
	);
	const onClock = (message: SandboxMessage) => Date.parse(message.createdAt) + campaignOffset;
	const zoneOf = new Map<string, string[]>();
	for (const phone of ZONES.lagos) zoneOf.set(phone, ['Africa/Lagos']);
	for (const phone of ZONES.kathmandu) zoneOf.set(phone, ['Asia/Kathmandu']);
	for (const phone of ZONES.tokyo) zoneOf.set(phone, ['Asia/Tokyo']);
	for (const phone of ZONES.dhaka) zoneOf.set(phone, ['Asia/Dhaka']);
	for (const phone of ZONES.brazil) zoneOf.set(phone, BRAZIL_ZONES);
	// Every message, at the sandbox's recorded time on the moved clock, inside its recipient's window in each of its zones.
	const outside = sends.filter((message) =>
		(zoneOf.get(message.to) ?? []).some((zone) => {
			const second = secondOfDay(zone, onClock(message));
			return second < OPEN[0] || second >= OPEN[1];
		}),
	);
	expect(outside.map((message) => `${message.to} at ${new Date(onClock(message)).toISOString()}`)).toEqual([]);

	const sentTo = (zone: string[]) => sends.filter((message) => zone.includes(message.to)).length;
	// Open throughout: all sent. Tokyo never opened: none. Brazil opened at 14:00 UTC: all sent, after it.
	expect([sentTo(ZONES.lagos), sentTo(ZONES.kathmandu), sentTo(ZONES.tokyo), sentTo(ZONES.brazil)]).toEqual([
		30, 30, 0, 40,
	]);
	// Dhaka's window closed with recipients left: some were sent, the rest waited and expired.
	const dhakaSent = sentTo(ZONES.dhaka);
	expect(dhakaSent).toBeGreaterThan(20);
	expect(dhakaSent).toBeLessThan(200);
	// It was still sending there in the seconds before the close: the close, not the audience, stopped it.
	const lastDhaka = Math.max(...sends.filter((message) => ZONES.dhaka.includes(message.to)).map(onClock));
	expect(CLOSE_AND_OPEN - lastDhaka).toBeLessThan(6000);

	const rows = await report(runner.context, created.id);
	const expired = rows.filter((row) => row.outcome === 'expired');
	expect(expired.length).toBe(20 + 200 - dhakaSent);
	expect(expired.every((row) => row.error === 'the campaign ended before it was sent')).toBe(true);
	const status = await campaignStatus(runner.context, created.id);
	expect(status.counts).toMatchObject({
		sent: sends.length,
		expired: expired.length,
		rejected: 1,
		pending: 0,
		claimed: 0,
	});

	// The rate: the number's 20/s in every sliding second of the sandbox's log (tolerance as rate.test.ts: 10% + 2).
	expectBusiestAtMost(
		sends.map((message) => Date.parse(message.createdAt)),
		Math.floor(RATE * 1.1) + 2,
	);
});

test('a dry run counts who the end would leave unsent in their windows, asks for a tz column where a country never opens whole, and stores nothing', async () => {
	const lines = [
		'phone,tz,1,2',
		...phones('234803124', 10).map((phone) => `+${phone},,a,b`),
		...phones('8190124', 5).map((phone) => `+${phone},,a,b`),
		'+79161234567,,a,b',
		'+4917099999998,Nowhere/Town,a,b',
	];
	const dir = mkdtempSync(join(tmpdir(), 'convo-windows-'));
	writeFileSync(join(dir, 'dry.csv'), `${lines.join('\n')}\n`);
	const before = (await runner.context.redis.keys(`${runner.env.RUNNER_PREFIX}:*campaign*`)).length;
	// 09:00-10:00: Tokyo opens at 00:00 UTC, Lagos at 08:00 UTC the next day; the end leaves Tokyo one second at 2/s.
	const dry = await createCampaign(runner.context, {
		templateId: positionalTemplate(runner.business).id,
		from: runner.business.phoneNumbers[1],
		source: join(dir, 'dry.csv'),
		rate: 2,
		window: '09:00-10:00',
		endAt: '2030-01-16T00:00:01Z',
		dryRun: true,
	});
	if (dry.kind !== 'dry_run') throw new Error('expected a dry run');
	expect(dry.counts).toEqual({ accepted: 15, rejected: 2, suppressed: 0, capped: 0, expired: 13 });
	expect(dry.zones).toEqual([
		{ zone: 'Africa/Lagos', recipients: 10 },
		{ zone: 'Asia/Tokyo', recipients: 5 },
	]);
	expect(dry.rejections.map((rejection) => [rejection.line, rejection.reason])).toEqual([
		[17, expect.stringMatching(/country \(RU\) spans \d+ time zones .* add a tz column/)],
		[18, expect.stringContaining('tz is not a time zone')],
	]);
	expect(dry.reasons).toContainEqual({
		outcome: 'expired',
		reason: expect.stringContaining('end'),
		count: 13,
		varies: false,
	});
	// Its duration waits for Tokyo's window, ten hours off: the end, not the rate, bounds it.
	// (whole seconds from its start, rounded up).
	const endsAt = Date.parse(dry.estimate.ends_at) + offset;
	expect(endsAt - Date.parse('2030-01-16T00:00:01Z')).toBeGreaterThanOrEqual(0);
	expect(endsAt - Date.parse('2030-01-16T00:00:01Z')).toBeLessThan(1000);
	expect((await runner.context.redis.keys(`${runner.env.RUNNER_PREFIX}:*campaign*`)).length).toBe(before);
});

test('a bad window or end is refused naming the setting as the client calls it', async () => {
	const settings = {
		templateId: positionalTemplate(runner.business).id,
		from: runner.business.phoneNumbers[1],
		source: '/nonexistent.csv',
	};
	await expect(createCampaign(runner.context, { ...settings, window: '20:00-09:00' })).rejects.toThrow(
		'--window 20:00-09:00 ends before it starts',
	);
	await expect(
		createCampaign(runner.context, { ...settings, window: 'mon-fri 9-5' }, undefined, API_NAMES),
	).rejects.toThrow(/^window "9-5" is not a time range/);
	await expect(
		createCampaign(runner.context, { ...settings, endAt: 'tomorrow' }, undefined, API_NAMES),
	).rejects.toThrow(/^end_at /);
	await expect(createCampaign(runner.context, { ...settings, endAt: '2020-01-01T00:00:00Z' })).rejects.toThrow(
		'--end must be after the campaign starts (now)',
	);
});

test('without a window, an end stops the sends already queued: nothing arrives after it, the rest expire', async () => {
	const audience = phones('4917013', 400);
	const dir = mkdtempSync(join(tmpdir(), 'convo-windows-'));
	writeFileSync(join(dir, 'end.csv'), `${['phone,1,2', ...audience.map((phone) => `+${phone},a,b`)].join('\n')}\n`);
	// 400 at 50/s is 8 s of sends, all queued at once (the feeder's window is 20 s of work); the end comes after 3.
	const endAt = Date.now() + offset + 3000;
	const created = await createCampaign(runner.context, {
		templateId: positionalTemplate(runner.business).id,
		from: runner.business.phoneNumbers[2],
		source: join(dir, 'end.csv'),
		rate: 50,
		endAt: new Date(endAt).toISOString(),
	});
	if (created.kind !== 'campaign') throw new Error('expected a campaign');
	await waitFor(
		'the campaign to complete at its end',
		async () => (await campaignStatus(runner.context, created.id)).state === 'completed',
		60_000,
		500,
	);
	const sends = (await templateSends(runner.sandbox)).filter((message) => audience.includes(message.to));
	const status = await campaignStatus(runner.context, created.id);
	expect(status.counts).toMatchObject({ sent: sends.length, expired: 400 - sends.length, pending: 0, claimed: 0 });
	expect(sends.length).toBeGreaterThan(20);
	expect(sends.length).toBeLessThan(400);
	// A send claimed just before the end arrives a moment after it (its HTTP call): never later than that.
	const late = sends.filter((message) => Date.parse(message.createdAt) + offset > endAt + 250);
	expect(late.map((message) => new Date(Date.parse(message.createdAt) + offset).toISOString())).toEqual([]);
});
