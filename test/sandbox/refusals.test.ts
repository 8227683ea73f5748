/**
 * Blocked template sends (SPEC B8: "400 validation or blocked send"): a template paused or
 * disabled for its quality, a sending number restricted, and the business's messaging limit of
 * distinct customers in a rolling 24 hours, each set and lifted through the admin API.
 */
import { admin, call, digits, expectErrorBody, useSandbox } from './support';

describe('sandbox: blocked template sends', () => {
	const context = useSandbox();
	const positional = () => context.business.templates.find((template) => template.kind === 'positional')!;
	const send = (phone: string, from = context.business.phoneNumbers[0]) =>
		call(context, 'sendTemplate', {
			query: { template_id: positional().id, from_phone_number: from },
			body: { phone, 1: 'Ada', 2: 'A-1' },
		});
	const phones = (n: number) => Array.from({ length: n }, (_, i) => `4930555${String(i).padStart(4, '0')}`);

	it('refuses a paused or disabled template with 400 naming template_id, and sends it again once active', async () => {
		const [phone] = phones(1);
		for (const quality of ['paused', 'disabled'] as const) {
			await admin(context, 'PUT', `templates/${positional().id}/quality`, { quality });
			const refused = await send(phone);
			expectErrorBody(refused, 400);
			expect(refused.body.field).toBe('template_id');
			expect(refused.body.message).toContain(`blocked send: template ${positional().name} is ${quality}`);
		}
		expect(await admin(context, 'GET', 'messages')).toHaveLength(0);
		await admin(context, 'PUT', `templates/${positional().id}/quality`, { quality: 'active' });
		expect((await send(phone)).status).toBe(200);
		expect(await admin(context, 'GET', 'refusals')).toMatchObject({ templates: {} });
	});

	it('refuses sends from a restricted number with 400 naming from_phone_number; the other numbers still send', async () => {
		const [restricted, other] = context.business.phoneNumbers;
		await admin(context, 'PUT', `numbers/+${restricted}/state`, { state: 'restricted' });
		const refused = await send(phones(1)[0], restricted);
		expectErrorBody(refused, 400);
		expect(refused.body.field).toBe('from_phone_number');
		expect(refused.body.message).toContain(`blocked send: phone number ${restricted}`);
		expect((await send(phones(1)[0], other)).status).toBe(200);
		await admin(context, 'PUT', `numbers/${restricted}/state`, { state: 'active' });
		expect((await send(phones(1)[0], restricted)).status).toBe(200);
	});

	it('counts distinct customers against the messaging limit for 24 hours of service time; a customer already messaged sends again', async () => {
		await admin(context, 'PUT', `businesses/${context.business.id}/daily-limit`, { limit: 3 });
		const [a, b, c, d] = phones(4);
		for (const phone of [a, b, c, a, b]) expect((await send(phone)).status).toBe(200);
		const refused = await send(d);
		expectErrorBody(refused, 400);
		expect(refused.body.field).toBe('phone');
		expect(refused.body.message).toContain('messaging limit of 3 customers in 24 hours');
		expect(await admin(context, 'GET', 'refusals')).toMatchObject({
			dailyLimits: { [context.business.id]: { limit: 3, used: 3 } },
		});
		// Another business has its own limit (none here).
		const other = context.other;
		const theirs = await call(context, 'sendTemplate', {
			as: other,
			query: {
				template_id: other.templates.find((template) => template.kind === 'positional')!.id,
				from_phone_number: other.phoneNumbers[0],
			},
			body: { phone: d, 1: 'Ada', 2: 'A-1' },
		});
		expect(theirs.status).toBe(200);
		// Just short of 24 hours the customers are still counted; at 24 hours they drop out.
		await admin(context, 'POST', 'clock', { advanceMs: 24 * 3_600_000 - 1_000 });
		expect((await send(d)).status).toBe(400);
		await admin(context, 'POST', 'clock', { advanceMs: 1_000 });
		expect((await send(d)).status).toBe(200);
		// Unlimited again: no count kept.
		await admin(context, 'PUT', `businesses/${context.business.id}/daily-limit`, { limit: null });
		for (const phone of phones(6)) expect((await send(phone)).status).toBe(200);
	});

	it('a reset lifts every refusal; unknown targets and bad bodies are refused naming the field', async () => {
		await admin(context, 'PUT', `templates/${positional().id}/quality`, { quality: 'paused' });
		await admin(context, 'PUT', `businesses/${context.business.id}/daily-limit`, { limit: 1 });
		await admin(context, 'POST', 'reset');
		expect(await admin(context, 'GET', 'refusals')).toEqual({
			templates: {},
			numbers: [],
			dailyLimits: {},
			refused: [],
		});
		expect((await send(digits(phones(1)[0]))).status).toBe(200);

		const bad = async (path: string, body: unknown, status: number, field: string) => {
			const response = await fetch(`${context.sandbox.baseUrl}/__sandbox/${path}`, {
				method: 'PUT',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify(body),
			});
			expect(response.status).toBe(status);
			expect(((await response.json()) as { field?: string }).field).toBe(field);
		};
		await bad('templates/00000000-0000-4000-8000-000000000404/quality', { quality: 'paused' }, 404, 'id');
		await bad(`templates/${positional().id}/quality`, { quality: 'asleep' }, 400, 'quality');
		await bad('numbers/4930000000000/state', { state: 'restricted' }, 404, 'phone');
		await bad(`businesses/${context.business.id}/daily-limit`, { limit: 0 }, 400, 'limit');
	});
});
