import { execFile } from 'node:child_process';
import { join } from 'node:path';

import {
	deliveryChecks,
	deliveryOutcomes,
	setDelivery,
	type DeliveryOutcome,
	type DeliverySettings,
} from '../runner/support';
import { createSandboxContext, startSandbox } from '../../sandbox/src';
import { parseTimeline } from '../../sandbox/src/messageStatus';
import {
	admin,
	call,
	contactOf,
	digits,
	eventually,
	expectErrorBody,
	sleep,
	startReceiver,
	useSandbox,
	type Json,
	type Receiver,
	type SandboxTestContext,
} from './support';

/** The issue's campaign: 90% delivered, 60% read, 5% failed with two reasons, 10% replies. */
const ISSUE_SHARES: DeliverySettings = {
	seed: 'issue-22',
	delivered: 0.9,
	read: 0.6,
	failed: [
		{ share: 0.03, reason: 'reason a' },
		{ share: 0.02, reason: 'reason b' },
	],
	replied: 0.1,
};

const phoneOf = (i: number, series = 0) => `49170${String(series).padStart(2, '0')}${String(i).padStart(6, '0')}`;
const MINUTE = 60_000;

describe('sandbox: delivery outcomes from settings (POST /__sandbox/delivery)', () => {
	const context = useSandbox();

	/** B8 sends to `phones`, `parallel` at a time; answers the message ids in the phones' order. */
	const sendTemplates = async (phones: string[], parallel = 16): Promise<string[]> => {
		const template = context.business.templates.find((candidate) => candidate.kind === 'positional')!;
		const ids: string[] = new Array(phones.length);
		let next = 0;
		const worker = async () => {
			while (next < phones.length) {
				const index = next++;
				const answer = await call(context, 'sendTemplate', {
					query: { template_id: template.id, from_phone_number: context.business.phoneNumbers[1] },
					body: { phone: phones[index], 1: 'Ada', 2: `A-${index}` },
				});
				if (answer.status !== 200)
					throw new Error(`send to ${phones[index]} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
				ids[index] = answer.body.message_id;
			}
		};
		await Promise.all(Array.from({ length: parallel }, worker));
		return ids;
	};
	/** An A2 send with a template (no 24-hour window needed). */
	const sendA2 = async (phone: string): Promise<string> => {
		const template = context.business.templates.find((candidate) => candidate.kind === 'positional')!;
		const answer = await call(context, 'sendMessage', {
			body: {
				to: `+${phone}`,
				from: 'whatsapp',
				type: 'text',
				content: { text: 'x' },
				channel_uuid: context.business.channelUuid,
				template_uuid: template.id,
				template_values: ['Ada', 'A-1'],
			},
		});
		expect(answer.status).toBe(200);
		return answer.body.message.uuid;
	};
	const a1 = async (uuid: string) =>
		(await call(context, 'getMessageStatus', { params: { uuid } })).body.message.status;
	const b7 = async (phone: string, uuid: string) =>
		(await call(context, 'getConversation', { query: { phone } })).body.conversation.messages.find(
			(message: Json) => message.id === uuid,
		);
	const b4 = async (phone: string, uuid: string) => {
		const logged = (await admin(context, 'GET', 'messages')).find((message: Json) => message.uuid === uuid);
		const answer = await call(context, 'getContactMessages', { params: { uuid: logged.contactUuid } });
		expect(logged.to).toBe(phone);
		return answer.body.messages.find((message: Json) => message.uuid === uuid).status;
	};
	const advance = (advanceMs: number) => admin(context, 'POST', 'clock', { advanceMs });
	const byPhone = (outcomes: DeliveryOutcome[]) =>
		new Map(
			outcomes.map(({ to, outcome, reason, reply_text }) => [to, JSON.stringify({ outcome, reason, reply_text })]),
		);

	it('draws the shares on 5,000 recipients within 2 points of each, replies among the read first', async () => {
		await setDelivery(context.sandbox, ISSUE_SHARES);
		const phones = Array.from({ length: 5000 }, (_, i) => phoneOf(i));
		const ids = await sendTemplates(phones);
		const outcomes = await deliveryOutcomes(context.sandbox);
		expect(outcomes.map((outcome) => outcome.message_id).sort()).toEqual([...ids].sort());
		const share = (match: (outcome: DeliveryOutcome) => boolean) => outcomes.filter(match).length / outcomes.length;
		const drawn = {
			reasonA: share((o) => o.outcome === 'failed' && o.reason === 'reason a'),
			reasonB: share((o) => o.outcome === 'failed' && o.reason === 'reason b'),
			delivered: share((o) => o.outcome === 'delivered' || o.outcome === 'read'),
			read: share((o) => o.outcome === 'read'),
			sent: share((o) => o.outcome === 'sent'),
			replied: share((o) => o.replied_at !== undefined),
		};
		const expected = { reasonA: 0.03, reasonB: 0.02, delivered: 0.9, read: 0.6, sent: 0.05, replied: 0.1 };
		for (const [name, value] of Object.entries(expected)) {
			expect([name, Math.abs(drawn[name as keyof typeof drawn] - value) <= 0.02]).toEqual([name, true]);
		}
		// Every failure has one of the reasons and a failure time, nothing else fails.
		expect(outcomes.filter((o) => o.outcome === 'failed').every((o) => o.failed_at && !o.delivered_at)).toBe(true);
		// Replies go to read messages first: with 10% replies and 60% read, every replier read.
		expect(outcomes.filter((o) => o.replied_at).every((o) => o.outcome === 'read' && o.reply_text === 'Thanks!')).toBe(
			true,
		);
		// 5,000 sends are work, not a bound: 7 s alone, past 30 s in the parallel lane of a loaded CI run.
	}, 180_000);

	it('is deterministic: the same seed and phones give the same outcomes in any send order, another seed others', async () => {
		const settings = { ...ISSUE_SHARES, replied: 0.5, reply_texts: ['Yes', 'No', 'Later'] };
		const phones = Array.from({ length: 300 }, (_, i) => phoneOf(i, 7));
		const draw = async (seed: string | number, order: string[]) => {
			await admin(context, 'POST', 'reset');
			await setDelivery(context.sandbox, { ...settings, seed });
			await sendTemplates(order, 8);
			return byPhone(await deliveryOutcomes(context.sandbox));
		};
		const first = await draw('seed-1', phones);
		const again = await draw('seed-1', [...phones].reverse());
		expect(again).toEqual(first);
		expect(new Set(first.values()).size).toBeGreaterThan(5);
		const other = await draw(12345, phones);
		const differing = phones.filter((phone) => other.get(phone) !== first.get(phone)).length;
		expect(differing).toBeGreaterThan(phones.length / 4);
	});

	it('shows each step in A1, B7 and B4 at its service time; a failure reason is B7 error', async () => {
		const delays_ms = {
			sent: 1 * MINUTE,
			delivered: 2 * MINUTE,
			failed: 3 * MINUTE,
			read: 5 * MINUTE,
			reply: 30 * MINUTE,
		};
		// One settings per send, so each phone gets the outcome the step needs; plans keep what they drew.
		const plans: Array<[string, Omit<DeliverySettings, 'seed' | 'delays_ms'>]> = [
			['read', { delivered: 1, read: 1 }],
			['delivered', { delivered: 1, read: 0 }],
			['sent', { delivered: 0, read: 0 }],
			['failed', { delivered: 0, read: 0, failed: [{ share: 1, reason: 'Number is not on WhatsApp' }] }],
		];
		const sent: Record<string, { phone: string; uuid: string }> = {};
		for (const [index, [name, shares]] of plans.entries()) {
			await setDelivery(context.sandbox, { seed: 's', delays_ms, ...shares });
			const phone = phoneOf(index, 3);
			// A2 for one of them, B8 for the rest: both kinds of send draw.
			sent[name] = { phone, uuid: index === 0 ? await sendA2(phone) : (await sendTemplates([phone]))[0] };
		}
		const outcomes = await deliveryOutcomes(context.sandbox);
		const logged = await admin(context, 'GET', 'messages');
		for (const [name, { uuid }] of Object.entries(sent)) {
			const outcome = outcomes.find((o) => o.message_id === uuid)!;
			const createdAt = Date.parse(logged.find((message: Json) => message.uuid === uuid).createdAt);
			expect(outcome.outcome).toBe(name);
			expect(Date.parse(outcome.sent_at) - createdAt).toBe(delays_ms.sent);
			if (name === 'read' || name === 'delivered')
				expect(Date.parse(outcome.delivered_at!) - createdAt).toBe(delays_ms.delivered);
			if (name === 'read') expect(Date.parse(outcome.read_at!) - createdAt).toBe(delays_ms.read);
			if (name === 'failed')
				expect([Date.parse(outcome.failed_at!) - createdAt, outcome.reason]).toEqual([
					delays_ms.failed,
					'Number is not on WhatsApp',
				]);
		}
		// [service minute, A1 status per plan]; midway between steps, so test time does not matter.
		const steps: Array<[number, Record<string, string>]> = [
			[0.5, { read: 'enqueued', delivered: 'enqueued', sent: 'enqueued', failed: 'enqueued' }],
			[1.5, { read: 'sent', delivered: 'sent', sent: 'sent', failed: 'sent' }],
			[2.5, { read: 'delivered', delivered: 'delivered', sent: 'sent', failed: 'sent' }],
			[4, { read: 'delivered', delivered: 'delivered', sent: 'sent', failed: 'failed' }],
			[10, { read: 'read', delivered: 'delivered', sent: 'sent', failed: 'failed' }],
		];
		const b7Of: Record<string, string> = {
			enqueued: 'DELIVERED',
			sent: 'DELIVERED',
			delivered: 'DELIVERED',
			read: 'READ',
			failed: 'ERROR',
		};
		let at = 0;
		for (const [minute, expected] of steps) {
			await advance(minute * MINUTE - at);
			at = minute * MINUTE;
			for (const [name, { phone, uuid }] of Object.entries(sent)) {
				const status = expected[name];
				expect([minute, name, await a1(uuid)]).toEqual([minute, name, status]);
				const shown = await b7(phone, uuid);
				expect([minute, name, shown.status, shown.error]).toEqual([
					minute,
					name,
					b7Of[status],
					status === 'failed' ? 'Number is not on WhatsApp' : null,
				]);
				expect([minute, name, await b4(phone, uuid)]).toEqual([minute, name, status === 'failed' ? 'failed' : 'sent']);
			}
		}
	});

	it('delivers replies as message_created at their service time (clock moved) with the recipient as from', async () => {
		const receiver = await startReceiver();
		try {
			await admin(context, 'POST', 'webhooks', { business: context.business.id, url: receiver.url });
			await setDelivery(context.sandbox, {
				seed: 'r',
				delivered: 1,
				read: 1,
				replied: 1,
				reply_texts: ['Yes please, book me in'],
				delays_ms: { reply: 10 * MINUTE },
			});
			const phone = phoneOf(1, 4);
			const [uuid] = await sendTemplates([phone]);
			await sleep(200);
			expect(receiver.received).toEqual([]);
			await advance(9 * MINUTE);
			await sleep(200);
			expect(receiver.received).toEqual([]);
			// The clock reaches the reply's time: it comes without another request.
			await advance(2 * MINUTE);
			const [delivery] = await eventually(() => receiver.received.length > 0 && receiver.received);
			const [outcome] = await deliveryOutcomes(context.sandbox);
			expect(outcome).toMatchObject({
				message_id: uuid,
				replied_at: expect.any(String),
				reply_text: 'Yes please, book me in',
			});
			expect(delivery.body).toMatchObject({
				event: 'message_created',
				payload: {
					from: phone,
					to: context.business.phoneNumbers[1],
					text: 'Yes please, book me in',
					status: 'received',
					createdAt: outcome.replied_at!.replace('Z', '+00:00'),
					contact: { phoneNumber: `+${phone}` },
				},
			});
			// The reply is the conversation's inbound message (B7).
			const conversation = (await call(context, 'getConversation', { query: { phone } })).body.conversation;
			expect(conversation.messages.map((message: Json) => [message.direction, message.status, message.text])).toEqual([
				['outbound', 'READ', expect.stringContaining('Ada')],
				['inbound', 'RECEIVED', 'Yes please, book me in'],
			]);
			await sleep(200);
			expect(receiver.received).toHaveLength(1);
		} finally {
			await receiver.close();
		}
	});

	it('delivers a reply on its own timer (re-armed when the clock moves), and a reset cancels replies still to come', async () => {
		const receiver: Receiver = await startReceiver();
		try {
			const register = () => admin(context, 'POST', 'webhooks', { business: context.business.id, url: receiver.url });
			await register();
			const settings = {
				seed: 't',
				delivered: 1,
				read: 1,
				replied: 1,
				reply_texts: ['ok'],
				delays_ms: { sent: 0, delivered: 0, read: 0, reply: 400 },
			};
			await setDelivery(context.sandbox, settings);
			const phones = [phoneOf(1, 5), phoneOf(2, 5)];
			await sendTemplates(phones, 1);
			// No request to the sandbox meanwhile: only the timer can make them.
			await eventually(() => receiver.received.length === 2, 5000);
			expect(receiver.received.map((delivery) => delivery.body.payload.from).sort()).toEqual([...phones].sort());

			receiver.received.length = 0;
			await setDelivery(context.sandbox, settings);
			await sendTemplates([phoneOf(3, 5)], 1);
			await admin(context, 'POST', 'reset');
			await register();
			await sleep(1000);
			expect(receiver.received).toEqual([]);

			// The clock moves part of the way: the timer waits only for the rest (0.5 s, not 4 s).
			await setDelivery(context.sandbox, { ...settings, delays_ms: { ...settings.delays_ms, reply: 4000 } });
			await sendTemplates([phoneOf(4, 5)], 1);
			await advance(3500);
			const moved = Date.now();
			await eventually(() => receiver.received.length === 1, 5000);
			expect(Date.now() - moved).toBeLessThan(2500);
		} finally {
			await receiver.close();
		}
	});

	it('a reply still to come does not keep the process alive', async () => {
		// The app closed but the context never told to stop: only an unref'd timer lets node exit.
		const script = `
			const { createSandboxContext } = require('./sandbox/src/index.ts');
			const { buildApp } = require('./sandbox/src/app.ts');
			(async () => {
				const context = createSandboxContext();
				const app = buildApp(context);
				const business = context.store.businesses[0];
				const template = [...context.store.templates.values()].find((t) => t.businessId === business.id);
				await app.inject({ method: 'POST', url: '/__sandbox/delivery', payload: { seed: 1, delivered: 1, read: 1, replied: 1, delays_ms: { reply: 3600000 } } });
				const sent = await app.inject({
					method: 'POST',
					url: '/api/external/v2/send-template?template_id=' + template.id + '&from_phone_number=' + business.phoneNumbers[0],
					headers: { 'x-api-key': business.apiKey },
					payload: { phone: '4917000000001', 1: 'a', 2: 'b' },
				});
				const [outcome] = (await app.inject({ url: '/__sandbox/delivery/outcomes' })).json();
				console.log(sent.statusCode, Boolean(outcome.replied_at));
				await app.close();
			})();`;
		const started = Date.now();
		const output = await new Promise<string>((resolve, reject) => {
			execFile(
				process.execPath,
				['--require', 'tsx/cjs', '-e', script],
				// tsx compiles the sandbox first: 16 s once on a loaded CI machine. The reply is an hour away.
				{ cwd: join(__dirname, '..', '..'), timeout: 90_000 },
				(error, stdout, stderr) => (error ? reject(new Error(`${error.message}: ${stderr}`)) : resolve(stdout)),
			);
		});
		expect(output.trim()).toBe('200 true');
		expect(Date.now() - started).toBeLessThan(60_000);
	}, 100_000);

	it('logs every A1 request per message and B7 request per phone at service time; reset and DELETE requests clear it', async () => {
		await setDelivery(context.sandbox, ISSUE_SHARES);
		const [first, second] = [phoneOf(1, 6), phoneOf(2, 6)];
		const [one, two] = await sendTemplates([first, second], 1);
		const start = Date.parse((await admin(context, 'GET', 'clock')).now);
		await a1(one);
		await advance(MINUTE);
		await a1(one);
		await a1(two);
		await b7(first, one);
		await advance(MINUTE);
		await b7(first, one);
		// A field lookup names no phone: not in the log.
		await call(context, 'getConversation', {
			query: { field_key: context.business.fieldKeys[0], field_value: 'nobody' },
		});
		const checks = await deliveryChecks(context.sandbox);
		expect(Object.keys(checks.status).sort()).toEqual([one, two].sort());
		expect(checks.status[one]).toHaveLength(2);
		expect(checks.status[two]).toHaveLength(1);
		expect(Object.keys(checks.conversations)).toEqual([first]);
		const offsets = (times: string[]) => times.map((time) => Math.round((Date.parse(time) - start) / MINUTE));
		expect(offsets(checks.status[one])).toEqual([0, 1]);
		expect(offsets(checks.conversations[first])).toEqual([1, 2]);

		await admin(context, 'DELETE', 'requests');
		expect(await deliveryChecks(context.sandbox)).toEqual({ status: {}, conversations: {} });
		await a1(one);
		expect(Object.keys((await deliveryChecks(context.sandbox)).status)).toEqual([one]);
		await admin(context, 'POST', 'reset');
		expect(await deliveryChecks(context.sandbox)).toEqual({ status: {}, conversations: {} });
	});

	it('DELETE returns later sends to the default timeline; messages sent before keep what they drew', async () => {
		await setDelivery(context.sandbox, {
			seed: 'd',
			delivered: 0,
			read: 0,
			failed: [{ share: 1, reason: 'Blocked by the recipient' }],
		});
		expect((await admin(context, 'GET', 'delivery')).settings).toMatchObject({
			seed: 'd',
			delays_ms: { sent: 2000, delivered: 4000, read: 10000, failed: 2000, reply: 15000 },
		});
		const [before] = await sendTemplates([phoneOf(1, 8)]);
		await setDelivery(context.sandbox, null);
		expect(await admin(context, 'GET', 'delivery')).toEqual({ settings: null });
		const [after] = await sendTemplates([phoneOf(2, 8)]);
		const outcomes = await deliveryOutcomes(context.sandbox);
		const logged = await admin(context, 'GET', 'messages');
		const createdAt = Date.parse(logged.find((message: Json) => message.uuid === after).createdAt);
		expect(outcomes.find((o) => o.message_id === before)).toMatchObject({
			outcome: 'failed',
			reason: 'Blocked by the recipient',
		});
		const defaults = outcomes.find((o) => o.message_id === after)!;
		expect(defaults.outcome).toBe('read');
		expect(
			[defaults.sent_at, defaults.delivered_at, defaults.read_at].map((time) => Date.parse(time!) - createdAt),
		).toEqual([2000, 4000, 10000]);
		await advance(60_000);
		expect([await a1(before), await a1(after)]).toEqual(['failed', 'read']);
	});

	it('refuses settings that break a rule, naming the field', async () => {
		const refused = async (body: unknown, field: string | undefined, words: RegExp) => {
			const response = await fetch(`${context.sandbox.baseUrl}/__sandbox/delivery`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify(body),
			});
			const answer = { status: response.status, body: (await response.json()) as Json, headers: response.headers };
			expectErrorBody(answer, 400);
			expect([answer.body.field, answer.body.message]).toEqual([field, expect.stringMatching(words)]);
		};
		await refused({ ...ISSUE_SHARES, delivered: 1.5 }, 'delivered', /delivered is 1.5; at most 1/);
		await refused({ ...ISSUE_SHARES, read: 0.95 }, 'read', /read \(0.95\) must be at most delivered \(0.9\)/);
		await refused({ ...ISSUE_SHARES, replied: 0.95 }, 'replied', /replied \(0.95\) must be at most delivered/);
		await refused(
			{ ...ISSUE_SHARES, failed: [{ share: 0.2, reason: 'x' }] },
			'failed',
			/plus the failed shares \(0.2\) is 1.1; at most 1/,
		);
		await refused(
			{ ...ISSUE_SHARES, delays_ms: { read: 1000 } },
			'delays_ms.read',
			/delays_ms.read \(1000\) must be at least delays_ms.delivered \(4000, the default\)/,
		);
		await refused({ ...ISSUE_SHARES, failed: [{ share: 0.01, reason: '' }] }, 'failed[0].reason', /must not be empty/);
		await refused({ ...ISSUE_SHARES, colour: 'red' }, undefined, /unknown field: colour/);
		await refused({ delivered: 0.5, read: 0.1 }, 'seed', /^seed is required$/);
		await refused(
			{ ...ISSUE_SHARES, seed: true },
			'seed',
			/^seed must be a string \(1 to 200 characters\) or a number$/,
		);
		// Nothing was set by the refused calls.
		expect(await admin(context, 'GET', 'delivery')).toEqual({ settings: null });
	});
});

describe('sandbox: a default timeline of its own (startSandbox({ timeline }), --timeline)', () => {
	// Minutes, and the clock moved midway between steps, so the test's own time does not matter.
	const timeline = { sent: 1 * MINUTE, delivered: 3 * MINUTE, read: 7 * MINUTE, failed: 2 * MINUTE };
	const context = {} as SandboxTestContext;
	beforeAll(async () => {
		context.sandbox = await startSandbox({ port: 0, timeline });
		[context.business, context.other] = context.sandbox.fixture.businesses;
	});
	afterAll(async () => {
		await context.sandbox?.close();
	});

	const template = () => context.business.templates.find((candidate) => candidate.kind === 'positional')!;
	const sendTemplate = async (phone: string) => {
		const answer = await call(context, 'sendTemplate', {
			query: { template_id: template().id, from_phone_number: context.business.phoneNumbers[1] },
			body: { phone, 1: 'Ada', 2: 'A-1' },
		});
		expect(answer.status).toBe(200);
		return answer.body.message_id as string;
	};
	const a1 = async (uuid: string) =>
		(await call(context, 'getMessageStatus', { params: { uuid } })).body.message.status;

	it('every send follows it (B8, an undeliverable contact, a dashboard send), before and after a reset', async () => {
		for (const round of ['first', 'after reset']) {
			if (round === 'after reset') await admin(context, 'POST', 'reset');
			const reader = phoneOf(1, 9);
			const undeliverable = contactOf(context.business, { inWindow: true, undeliverable: true });
			const [read, failed] = [await sendTemplate(reader), await sendTemplate(digits(undeliverable.phoneNumber))];
			const dashboard = (
				await admin(context, 'POST', 'dashboard-send', { business: context.business.id, to: reader, text: 'hi' })
			).message;
			const outcomes = await deliveryOutcomes(context.sandbox);
			const logged = await admin(context, 'GET', 'messages');
			const after = (uuid: string, time: string | undefined) =>
				Date.parse(time!) - Date.parse(logged.find((message: Json) => message.uuid === uuid).createdAt);
			const readOutcome = outcomes.find((o) => o.message_id === read)!;
			expect([round, readOutcome.outcome, readOutcome.sent_at, readOutcome.delivered_at, readOutcome.read_at]).toEqual([
				round,
				'read',
				expect.any(String),
				expect.any(String),
				expect.any(String),
			]);
			expect([
				after(read, readOutcome.sent_at),
				after(read, readOutcome.delivered_at),
				after(read, readOutcome.read_at),
			]).toEqual([timeline.sent, timeline.delivered, timeline.read]);
			const failedOutcome = outcomes.find((o) => o.message_id === failed)!;
			expect([failedOutcome.outcome, after(failed, failedOutcome.failed_at)]).toEqual(['failed', timeline.failed]);

			// [service minute, A1 of the B8 send, A1 of the undeliverable one, the dashboard send's status]
			const steps: Array<[number, string, string, string]> = [
				[0.5, 'enqueued', 'enqueued', 'sent'],
				[1.5, 'sent', 'enqueued', 'sent'],
				[2.5, 'sent', 'failed', 'delivered'],
				[3.5, 'delivered', 'failed', 'delivered'],
				[6.5, 'delivered', 'failed', 'read'],
				[7.5, 'read', 'failed', 'read'],
			];
			let at = 0;
			for (const [minute, ...expected] of steps) {
				await admin(context, 'POST', 'clock', { advanceMs: minute * MINUTE - at });
				at = minute * MINUTE;
				// A dashboard send starts at sent: delivered and read come a sent step earlier.
				expect([round, minute, await a1(read), await a1(failed), await a1(dashboard.uuid)]).toEqual([
					round,
					minute,
					...expected,
				]);
			}
		}
	});

	it('delivery settings take their step times from it unless they say; a reply comes 5 s after its read', async () => {
		await setDelivery(context.sandbox, { seed: 'x', delivered: 1, read: 1 });
		expect((await admin(context, 'GET', 'delivery')).settings.delays_ms).toEqual({
			...timeline,
			reply: timeline.read + 5000,
		});
		await setDelivery(context.sandbox, { seed: 'x', delivered: 1, read: 1, delays_ms: { read: 4 * MINUTE } });
		expect((await admin(context, 'GET', 'delivery')).settings.delays_ms).toEqual({
			...timeline,
			read: 4 * MINUTE,
			reply: timeline.read + 5000,
		});
	});

	it('refuses a timeline that breaks a rule, naming the step', async () => {
		expect(() => createSandboxContext({ timeline: { read: 1000 } })).toThrow(
			'read (1000) must be at least delivered (4000): a step cannot come before the one it follows',
		);
		expect(() => createSandboxContext({ timeline: { sent: 5000 } })).toThrow(
			/^delivered \(4000\) must be at least sent \(5000\)/,
		);
		expect(() => createSandboxContext({ timeline: { failed: 1.5 } })).toThrow(
			/^failed must be a whole number of milliseconds from 0 to 604800000, not 1.5$/,
		);
		expect(() => parseTimeline('sent=200,colour=1')).toThrow(/^"colour=1" is not <step>=<ms>/);
		expect(parseTimeline('read=20000, delivered = 5000')).toEqual({
			sent: 2000,
			delivered: 5000,
			read: 20000,
			failed: 2000,
		});
	});
});
