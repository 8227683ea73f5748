/**
 * A create's optional test send (`--test-to`, `test_to`, the node's "Test Send To"): the message of
 * the campaign's first accepted row, as the runner would send it (the same B8 request, built and
 * made by service.ts's templateSender, with schema.ts's templateBody), goes to a test phone
 * before the campaign may send. The campaign starts only when the service accepted it; otherwise
 * the create fails with what the service said and nothing sends. The test is no recipient: it is
 * in no ledger, count or report. It is held to the audience rules a recipient's send is (the
 * suppression list, the send window, the frequency cap, which it counts toward): a rule that holds
 * it back refuses the create naming the setting and the rule. The records:
 * docs/decisions/campaigns/test-send-refused-creates-nothing.md and test-send-when-and-once.md,
 * docs/decisions/audience/test-send-held-by-audience-rules.md.
 */
import type { RunnerContext } from '../context';
import { FieldError, UserError } from '../errors';
import { formatOf, readRecords, SourceError } from '../source';
import { findSuppression } from '../audience/suppression';
import { countCustomer, phonesCounted, showBudget } from '../audience/budget';
import { claimTestSend, giveBackTestSend } from '../audience/cap';
import { checkRow, decodeRecipient, encodeRecipient, templateBody, type CampaignBasics } from './schema';
import type { CampaignRecord } from './store';
import { describeWindow, nextOpening, openingAt, ZoneFinder } from '../audience/windows';

/** What a create (or a draft's start) answers of its test send. */
export interface TestSend {
	to: string;
	accepted: true;
	message_id?: string;
}

/** What a test send needs of its campaign: the request's settings and the rules it is held to. */
type TestCampaign = Pick<CampaignBasics, 'templateId' | 'from' | 'agentId' | 'window' | 'transactional'> & {
	/** Tests only: the campaign's clock offset (store.ts); a create's is the config's. */
	clockOffset?: number;
};

/** Outcomes that prove the test did not reach the phone: its count under the cap is given back. */
const NOT_SENT = new Set(['refused', 'stop', 'blocked', 'limited', 'hold', 'retry']);

/**
 * Sends `row` (a snapshot row, encoded) to `to` with the campaign's template, number and agent.
 * Anything but the service's acceptance, or a rule that holds the test back, is a FieldError that
 * starts with `name` (the client's name of the setting) and says why; the API key is never in it.
 */
export async function sendTest(
	context: RunnerContext,
	campaign: TestCampaign,
	row: string,
	to: string,
	name: string,
): Promise<TestSend> {
	const service = context.service;
	if (!service)
		throw new UserError(
			`${name} needs the service: set CONVO_EXTERNAL_URL and CONVO_API_KEY where the campaign is created`,
		);
	const refused = (what: string) =>
		new FieldError(`${name} ${to}: ${what}; nothing was started, no recipient was sent`, name);
	const rules = await testSendRules(context, campaign, to, 'claim');
	if ('held' in rules) throw refused(rules.held);
	const { countedAt } = rules;
	const send = service.templateSender({
		template_id: campaign.templateId,
		from_phone_number: campaign.from,
		agent_id: campaign.agentId || undefined,
	});
	const outcome = await send(templateBody({ ...decodeRecipient(row), phone: to }));
	if (countedAt !== undefined && NOT_SENT.has(outcome.kind))
		await giveBackTestSend(context, campaign.from, to, countedAt);
	switch (outcome.kind) {
		case 'ok':
			context.log.info({ messageId: outcome.messageId }, 'test send accepted');
			return { to, accepted: true, ...(outcome.messageId ? { message_id: outcome.messageId } : {}) };
		case 'refused':
		case 'stop':
		case 'blocked':
		case 'limited':
			throw refused(`the service refused the test send (${outcome.reason})`);
		case 'hold':
		case 'retry':
			throw refused(`the service did not take the test send now (${outcome.reason}); try again`);
		case 'unknown':
			throw refused(`no answer to the test send (${outcome.reason}); it may have reached ${to}`);
	}
}

/**
 * The rules a recipient's send is held to, for the test phone: not on the suppression list (unless
 * the campaign is transactional), inside the campaign's send window in the phone's time zone (its
 * country's, as for a row without `tz`), room under the frequency cap, and the test phone counted
 * under the daily messaging limit (audience/budget.ts), both last so a test refused by an earlier
 * rule counts nothing. `claim` counts the test under the cap and the limit; `look` (a dry run)
 * counts nothing. Returns the rule that holds the test back, in the words the create's refusal
 * uses, or the cap's claim time when the test counts.
 */
async function testSendRules(
	context: RunnerContext,
	campaign: TestCampaign,
	to: string,
	mode: 'claim' | 'look',
): Promise<{ held: string } | { countedAt?: number }> {
	if (!campaign.transactional) {
		const entry = await findSuppression(context, to);
		if (entry)
			return {
				held:
					`the phone is on the suppression list (${entry.source}, ${entry.at}), ` +
					'and a campaign that is not transactional sends it nothing, a test neither',
			};
	}
	if (campaign.window) {
		const offset = campaign.clockOffset ?? context.config.RUNNER_TEST_CLOCK_OFFSET_MS;
		const now = Date.now() + offset;
		const zone = new ZoneFinder(campaign.window, now).zoneOf(to, undefined);
		if (!zone.ok)
			return {
				held: `the campaign has a send window and ${zone.reason.split(':')[0].replace(/^phone/, 'the test phone')}`,
			};
		if (!openingAt(campaign.window, zone.key, now)) {
			const next = nextOpening(campaign.window, zone.key, now);
			const when = next ? `; it next opens ${new Date(next[0] - offset).toISOString()}` : '';
			const where = zone.key.startsWith('country:')
				? `the time zones of ${zone.key.slice('country:'.length)}`
				: zone.key;
			return {
				held:
					`outside the campaign's send window (${describeWindow(campaign.window)}) ` +
					`in the test phone's time zone (${where})${when}, and a test goes at once, ` +
					'held to the window as every send',
			};
		}
	}
	let countedAt: number | undefined;
	if (!campaign.transactional) {
		const claim = await claimTestSend(context, campaign.from, to, mode);
		if ('held' in claim)
			return {
				held:
					`frequency cap ${claim.held.rule}: next allowed ${claim.held.nextAllowed}; ` +
					'a test send counts toward the cap as every campaign message does',
			};
		countedAt = claim.countedAt;
	}
	// A transactional campaign's test too: every template send to a customer draws from the daily limit.
	const nextFree = mode === 'claim' ? await countTestCustomer(context, to) : await testCustomerNextFree(context, to);
	if (nextFree !== undefined) {
		if (countedAt !== undefined) await giveBackTestSend(context, campaign.from, to, countedAt);
		return {
			held:
				`the business's daily messaging limit is reached (the next customer can be counted at ${nextFree}), ` +
				'and a test send counts its customer as every template send does',
		};
	}
	return { countedAt };
}

/** Counts the test phone under the daily limit; when the limit holds it back, when the next customer can be counted. */
async function countTestCustomer(context: RunnerContext, to: string): Promise<string | undefined> {
	const counted = await countCustomer(context, to);
	return counted.counted ? undefined : new Date(counted.nextAt).toISOString();
}

/** As countTestCustomer, counting nothing: a phone counted already draws nothing more. */
async function testCustomerNextFree(context: RunnerContext, to: string): Promise<string | undefined> {
	if ((await phonesCounted(context, [to])) > 0) return undefined;
	const budget = await showBudget(context);
	if (budget.left === null || budget.left > 0) return undefined;
	// None left and none to free: the oldest customer left the span since the count, so one is free now.
	return budget.next_free_at ?? undefined;
}

/** What a dry run answers of its test send: not sent, and the rule that would refuse it now, if one would. */
export interface DryTestSend {
	to: string;
	sent: false;
	/** The rule that would hold the test back, in the words the create's refusal would use. */
	held?: string;
	note: string;
}

/** A dry run's test send: the audience rules looked at for the test phone, nothing sent or counted. */
export async function lookAtTestSend(context: RunnerContext, campaign: TestCampaign, to: string): Promise<DryTestSend> {
	const rules = await testSendRules(context, campaign, to, 'look');
	if ('held' in rules)
		return {
			to,
			sent: false,
			held: rules.held,
			note: 'a dry run sends no test; the create without dry run would be refused, naming this rule',
		};
	return { to, sent: false, note: 'a dry run sends no test; the create without dry run sends it first' };
}

/** The first row of `source` a campaign would accept (encoded), read only that far: what a cron schedule tests with. */
export async function firstAcceptedRow(
	context: RunnerContext,
	basics: CampaignBasics,
	names: { source: string; format?: string },
): Promise<string | undefined> {
	const records = readRecords(
		basics.source,
		formatOf(basics.source, basics.format, names),
		undefined,
		undefined,
		context.config,
		{ delimiter: basics.delimiter },
	);
	try {
		for await (const record of records) {
			if (!record.ok) continue;
			const verdict = checkRow(record.line, record.fields, new Map(), record.columns);
			if (verdict.ok) return encodeRecipient(verdict.recipient);
		}
	} catch (error) {
		if (error instanceof SourceError) throw new UserError(`Nothing was created: ${error.message}`);
		throw error;
	}
	return undefined;
}

/** A draft's test send, when it was created with one and holds an accepted row: what its start sends first. */
export async function draftTest(
	context: RunnerContext,
	campaign: CampaignRecord,
): Promise<{ to: string; row: string } | undefined> {
	const { redis, keys, ledger } = context;
	if (campaign.state !== 'draft') return undefined;
	const to = await redis.hget(keys.campaign(campaign.from, campaign.id), 'test_to');
	if (!to) return undefined;
	for await (const { from, records } of ledger.walk(campaign.id, campaign.total)) {
		const at = records.findIndex((record) => record?.outcome === 'pending');
		if (at < 0) continue;
		const row = await redis.hget(keys.recipients(campaign.from, campaign.id), String(from + at));
		return row ? { to, row } : undefined;
	}
	return undefined;
}
