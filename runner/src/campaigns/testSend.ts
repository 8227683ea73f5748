/**
 * A create's optional test send (`--test-to`, `test_to`, the node's "Test Send To"): the message of
 * the campaign's first accepted row, as the runner would send it (the same B8 request, built and
 * made by service.ts's templateSender, with schema.ts's templateBody), goes to a test phone
 * before the campaign may send. The campaign starts only when the service accepted it; otherwise
 * the create fails with what the service said and nothing sends. The test is no recipient: it is
 * in no ledger, count or report. docs/decisions.md, "Test send".
 */
import { FieldError, UserError, type RunnerContext } from '../context';
import { formatOf, readRecords, SourceError } from '../source';
import { checkRow, decodeRecipient, encodeRecipient, templateBody, type CampaignBasics } from './schema';
import type { CampaignRecord } from './store';

/** What a create (or a draft's start) answers of its test send. */
export interface TestSend {
	to: string;
	accepted: true;
	message_id?: string;
}

/**
 * Sends `row` (a snapshot row, encoded) to `to` with the campaign's template, number and agent.
 * Anything but the service's acceptance is a FieldError that starts with `name` (the client's
 * name of the setting) and says what the service answered; the API key is never in it.
 */
export async function sendTest(context: RunnerContext, campaign: Pick<CampaignBasics, 'templateId' | 'from' | 'agentId'>, row: string, to: string, name: string): Promise<TestSend> {
	const service = context.service;
	if (!service) throw new UserError(`${name} needs the service: set CONVO_EXTERNAL_URL and CONVO_API_KEY where the campaign is created`);
	const send = service.templateSender({ template_id: campaign.templateId, from_phone_number: campaign.from, agent_id: campaign.agentId || undefined });
	const outcome = await send(templateBody({ ...decodeRecipient(row), phone: to }));
	const refused = (what: string) => new FieldError(`${name} ${to}: ${what}; nothing was started, no recipient was sent`, name);
	switch (outcome.kind) {
		case 'ok':
			context.log.info({ to, messageId: outcome.messageId }, 'test send accepted');
			return { to, accepted: true, ...(outcome.messageId ? { message_id: outcome.messageId } : {}) };
		case 'refused':
		case 'stop':
			throw refused(`the service refused the test send (${outcome.reason})`);
		case 'hold':
		case 'retry':
			throw refused(`the service did not take the test send now (${outcome.reason}); try again`);
		case 'unknown':
			throw refused(`no answer to the test send (${outcome.reason}); it may have reached ${to}`);
	}
}

/** The first row of `source` a campaign would accept (encoded), read only that far: what a cron schedule tests with. */
export async function firstAcceptedRow(context: RunnerContext, basics: CampaignBasics, names: { source: string; format?: string }): Promise<string | undefined> {
	const records = readRecords(basics.source, formatOf(basics.source, basics.format, names), undefined, undefined, context.config, { delimiter: basics.delimiter });
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
export async function draftTest(context: RunnerContext, campaign: CampaignRecord): Promise<{ to: string; row: string } | undefined> {
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
