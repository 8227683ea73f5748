// @serial: measures a campaign's send rate while the campaigns beside it pause
/**
 * Campaigns that stop themselves when the service refuses the template or the number they send
 * with (runner/src/sending/refusals.ts), against runner processes and the sandbox, whose admin API
 * pauses a template or restricts a number mid-campaign. Every send, accepted or refused, is counted
 * in the sandbox's own log (`/__sandbox/messages`, and `/__sandbox/refusals` for the refused).
 */
import { writeFileSync } from 'node:fs';

import { campaignStatus, createCampaign, resumeCampaign } from '../../runner/src/core/campaigns';
import { templateSends, useRunnerUnderTest, waitFor, writeRecipientsCsv, type SandboxMessage } from './support';

jest.setTimeout(180_000);

const RATE = 20;
const runner = useRunnerUnderTest({ RUNNER_CONCURRENCY: '10' });

beforeAll(() => {
	runner.spawnWorker();
});

interface RefusedSend {
	at: string;
	template_id: string;
	from: string;
	field: string;
}

async function sandboxAdmin(method: string, path: string, body?: unknown): Promise<unknown> {
	const response = await fetch(`${runner.sandbox.baseUrl}/__sandbox/${path}`, {
		method,
		headers: body === undefined ? {} : { 'content-type': 'application/json' },
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
	return response.json();
}

// A test that fails midway leaves the service as it set it: the next test starts from a service
// that refuses nothing, so one failure is not reported twice.
afterEach(async () => {
	for (const template of runner.business.templates)
		await sandboxAdmin('PUT', `templates/${template.id}/quality`, { quality: 'active' });
	for (const number of runner.business.phoneNumbers)
		await sandboxAdmin('PUT', `numbers/${number}/state`, { state: 'active' });
});

/** The sends the sandbox refused, as its log keeps them. */
const refusedSends = async () => ((await sandboxAdmin('GET', 'refusals')) as { refused: RefusedSend[] }).refused;

const template = (name: string) => {
	const found = runner.business.templates.find((candidate) => candidate.name === name);
	if (!found) throw new Error(`no template ${name}`);
	return found;
};

async function create(templateName: string, from: string, seed: number, count: number) {
	const { path, phones } = writeRecipientsCsv(count, { seed });
	// welcome_named takes named variables.
	if (templateName === 'welcome_named')
		writeFileSync(
			path,
			`${['phone,first_name,order_id', ...phones.map((phone, i) => `+${phone},Customer ${i},order ${i}`)].join('\n')}\n`,
		);
	const created = await createCampaign(runner.context, {
		templateId: template(templateName).id,
		from,
		source: path,
		rate: RATE,
	});
	if (created.kind !== 'campaign') throw new Error('expected a campaign');
	return { id: created.id, from, phones };
}

/**
 * Waits for every campaign to complete; a timeout names each one's state, counts and why it may
 * wait (its hash's re-check and streak, the time since its last settle, its number's queue).
 */
async function allComplete(campaigns: Array<{ id: string; from: string }>, timeoutMs: number): Promise<void> {
	try {
		for (const campaign of campaigns)
			await waitFor('every campaign to complete', stateIs(campaign.id, 'completed'), timeoutMs);
	} catch (error) {
		const { redis, keys, queues } = runner.context;
		const seen = await Promise.all(
			campaigns.map(async ({ id, from }) => {
				const status = await campaignStatus(runner.context, id);
				const [recheck, streak, progress] = await redis.hmget(
					keys.campaign(from, id),
					'recheck',
					'blocked_streak',
					'last_progress_at',
				);
				return {
					id,
					state: status.state,
					counts: status.counts,
					paused_reason: status.paused_reason,
					last_error: status.last_error,
					waiting: status.waiting,
					recheck: recheck === null ? null : Number(recheck) - Date.now(),
					streak,
					since_progress_ms: Date.now() - Number(progress),
					queue: await queues.send(from).getJobCounts('waiting', 'delayed', 'active', 'prioritized'),
				};
			}),
		);
		throw new Error(`${(error as Error).message}: ${JSON.stringify(seen)}`);
	}
}

const stateIs = (id: string, state: string) => async () =>
	(await campaignStatus(runner.context, id)).state === state ? true : undefined;

/** Each phone's accepted template sends in the sandbox's log. */
async function sendsPerPhone(phones: string[]): Promise<number[]> {
	const all = await templateSends(runner.sandbox);
	const counts = new Map<string, number>();
	for (const message of all) counts.set(message.to, (counts.get(message.to) ?? 0) + 1);
	return phones.map((phone) => counts.get(phone) ?? 0);
}

test('a template paused mid-campaign pauses both campaigns on it within 5 refused sends; the other template goes on at its number full rate; a resume re-checks with one send, then sends the rest once each', async () => {
	const [first, second] = runner.business.phoneNumbers;
	const t = template('order_update');
	const a = await create('order_update', first, 31, 200);
	const b = await create('order_update', second, 32, 200);
	const c = await create('welcome_named', first, 33, 400);

	// A and B on their way.
	await waitFor(
		'A and B to send some',
		async () => {
			const counts = await sendsPerPhone([...a.phones, ...b.phones]);
			const sentA = counts.slice(0, 200).filter(Boolean).length;
			const sentB = counts.slice(200).filter(Boolean).length;
			return sentA >= 20 && sentB >= 20 ? true : undefined;
		},
		60_000,
	);
	const templatePausedAt = Date.now();
	await sandboxAdmin('PUT', `templates/${t.id}/quality`, { quality: 'paused' });
	await waitFor('A to pause', stateIs(a.id, 'paused'), 30_000);
	await waitFor('B to pause', stateIs(b.id, 'paused'), 30_000);
	const pausedAt = Date.now();

	const refused = await refusedSends();
	const refusedOf = (from: string) =>
		refused.filter((send) => send.template_id === t.id && send.from === from && send.field === 'template_id');
	const refusedFrom = (from: string) => refusedOf(from).length;
	// The first campaign to meet three refusals in a row pauses the other: either number may meet
	// none of its own (the promise is the pause, not a refusal per number), neither more than 5.
	// Shown with each refusal's arrival after the template's pause (ms): a breach then tells sends
	// in flight at the pause from sends started after it.
	const arrivals = (from: string) => refusedOf(from).map((send) => Date.parse(send.at) - templatePausedAt);
	expect({ first: refusedFrom(first), second: refusedFrom(second), at: [arrivals(first), arrivals(second)] }).toEqual({
		first: Math.min(refusedFrom(first), 5),
		second: Math.min(refusedFrom(second), 5),
		at: [arrivals(first), arrivals(second)],
	});
	expect(refusedFrom(first) + refusedFrom(second)).toBeGreaterThanOrEqual(3);
	expect(refused.filter((send) => send.template_id !== t.id)).toEqual([]);

	for (const campaign of [a, b]) {
		const status = await campaignStatus(runner.context, campaign.id);
		expect(status.paused_reason).toBe('template_refused');
		expect(status.paused_message).toMatch(/^blocked send: template order_update is paused/);
		expect(status.last_error).toMatch(/^400: the template cannot be sent now/);
		expect(status.counts.failed).toBe(0);
	}
	// C had half of its number's rate beside A; from A's pause on it has all of it.
	await new Promise((resolve) => setTimeout(resolve, 4_500));
	const cPhones = new Set(c.phones);
	const cSends = (await templateSends(runner.sandbox)).filter((message: SandboxMessage) => cPhones.has(message.to));
	const windowStart = pausedAt + 500;
	const windowEnd = pausedAt + 4_500;
	const inWindow = cSends.filter((message) => {
		const at = Date.parse(message.createdAt);
		return at >= windowStart && at < windowEnd;
	}).length;
	expect(inWindow / ((windowEnd - windowStart) / 1000)).toBeGreaterThanOrEqual(RATE * 0.85);
	expect((await campaignStatus(runner.context, c.id)).state).toBe('running');

	// Resumed while the template is still paused: one send re-checks it, and is refused: paused again at once.
	const beforeRecheck = refusedFrom(first);
	await resumeCampaign(runner.context, a.id);
	await waitFor('A to pause again', stateIs(a.id, 'paused'), 30_000);
	const afterRecheck = (await refusedSends()).filter((send) => send.template_id === t.id && send.from === first).length;
	expect(afterRecheck - beforeRecheck).toBe(1);
	expect((await campaignStatus(runner.context, a.id)).paused_reason).toBe('template_refused');

	// Restored: both resume and send the rest, each recipient once.
	await sandboxAdmin('PUT', `templates/${t.id}/quality`, { quality: 'active' });
	await resumeCampaign(runner.context, a.id);
	await resumeCampaign(runner.context, b.id);
	await allComplete([a, b, c], 90_000);
	for (const campaign of [a, b, c]) {
		expect(await sendsPerPhone(campaign.phones)).toEqual(campaign.phones.map(() => 1));
		const status = await campaignStatus(runner.context, campaign.id);
		expect(status.counts).toMatchObject({ sent: campaign.phones.length, failed: 0, pending: 0 });
		expect(status.paused_reason).toBeNull();
	}
});

test('a restricted number pauses the campaigns on it (number_refused) and not those on another number', async () => {
	const [, second, third] = runner.business.phoneNumbers;
	const onIt = await create('order_update', third, 41, 100);
	const alsoOnIt = await create('welcome_named', third, 42, 100);
	const elsewhere = await create('welcome_named', second, 43, 100);
	await sandboxAdmin('PUT', `numbers/${third}/state`, { state: 'restricted' });
	await waitFor(
		'the campaigns on the number to pause',
		async () => (await stateIs(onIt.id, 'paused')()) && (await stateIs(alsoOnIt.id, 'paused')()),
	);
	for (const campaign of [onIt, alsoOnIt])
		expect((await campaignStatus(runner.context, campaign.id)).paused_reason).toBe('number_refused');
	const refused = (await refusedSends()).filter((send) => send.from === third);
	expect(refused.every((send) => send.field === 'from_phone_number')).toBe(true);
	expect(refused.length).toBeLessThanOrEqual(10);
	await waitFor('the campaign on another number to complete', stateIs(elsewhere.id, 'completed'), 60_000);

	await sandboxAdmin('PUT', `numbers/${third}/state`, { state: 'active' });
	for (const campaign of [onIt, alsoOnIt]) await resumeCampaign(runner.context, campaign.id);
	for (const campaign of [onIt, alsoOnIt]) await waitFor('completed', stateIs(campaign.id, 'completed'), 60_000);
	for (const campaign of [onIt, alsoOnIt, elsewhere])
		expect(await sendsPerPhone(campaign.phones)).toEqual(campaign.phones.map(() => 1));
});
