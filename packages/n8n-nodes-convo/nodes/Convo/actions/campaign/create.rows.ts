import { createHash } from 'node:crypto';

import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { CAMPAIGN_NAME_MAX, campaignName, fitCampaignName } from '../../../shared/runnerApi/campaign';
import { identifierValue, templateVariables } from '../../descriptions/common.description';
import { BUSINESS_NUMBER_LABEL, phoneDigits } from '../../helpers/phone';
import { LocalTimeError, zonedInstant } from './localTime';

/**
 * The campaign's settings as the runner takes them, read from the node's parameters (those of
 * item 0: one campaign has one set). Nothing is sent when one of them is refused here.
 */
export function campaignSettings(this: IExecuteFunctions): IDataObject {
	const settings: IDataObject = {
		template_id: identifierValue.call(this, 'templateId', 0),
		from: phoneDigits.call(this, this.getNodeParameter('fromPhoneNumber', 0), BUSINESS_NUMBER_LABEL, undefined),
		rate: this.getNodeParameter('rate', 0, 60) as number,
	};
	if (settings.template_id === '') {
		throw new NodeOperationError(this.getNode(), 'Template ID is empty', {
			description: 'Nothing was sent. Give the ID of an approved template.',
		});
	}
	const agentId = identifierValue.call(this, 'additionalFields.agentId', 0);
	if (agentId !== '') settings.agent_id = agentId;
	const at = startTime.call(this, this.getNodeParameter('additionalFields.startAt', 0, ''));
	if (at !== undefined) settings.at = at;
	const testTo = String(this.getNodeParameter('additionalFields.testTo', 0, '') ?? '').trim();
	if (testTo !== '') settings.test_to = phoneDigits.call(this, testTo, 'Test Send To', undefined);
	const window = String(this.getNodeParameter('additionalFields.window', 0, '') ?? '').trim();
	if (window !== '') settings.window = window;
	const endAt = startTime.call(this, this.getNodeParameter('additionalFields.endAt', 0, ''), 'End Time');
	if (endAt !== undefined) settings.end_at = endAt;
	if ((this.getNodeParameter('options', 0, {}) as IDataObject).transactional === true) settings.transactional = true;
	const whenCapped = this.getNodeParameter('additionalFields.whenCapped', 0, 'skip') as string;
	if (whenCapped === 'wait') settings.when_capped = whenCapped;
	const others = String(this.getNodeParameter('additionalFields.abVariants', 0, '') ?? '')
		.split('\n')
		.map((line) => line.trim())
		.filter((line) => line !== '');
	if (others.length > 0) {
		// An A/B test: the Template ID is variant 1, its variables those the items give.
		settings.variants = [String(settings.template_id), ...others];
		settings.test_share = String(this.getNodeParameter('additionalFields.abTestShare', 0, '10%'));
		settings.pick_by = this.getNodeParameter('additionalFields.abPickBy', 0, 'read') as string;
		settings.decide_after = String(this.getNodeParameter('additionalFields.abDecideAfter', 0, '2h'));
		settings.if_tie = this.getNodeParameter('additionalFields.abIfTie', 0, 'first') as string;
	}
	return settings;
}

/** Start Time or End Time as the runner takes it: with an offset as given, without one in the workflow's time zone. */
function startTime(this: IExecuteFunctions, value: unknown, label = 'Start Time'): string | undefined {
	const text = String(value ?? '').trim();
	if (text === '') return undefined;
	const refuse = (reason: string, hint: string) =>
		new NodeOperationError(this.getNode(), `${label} "${text.slice(0, 60)}" ${reason}`, {
			description:
				`Nothing was sent. ${hint}, ` + `or leave ${label} empty${label === 'Start Time' ? ' to start at once' : ''}.`,
		});
	if (/(Z|[+-]\d\d:?\d\d)$/i.test(text)) {
		const at = new Date(text);
		if (Number.isNaN(at.getTime()))
			throw refuse('is not a date and time', 'Give an ISO date and time such as 2026-03-01T09:00:00');
		return at.toISOString();
	}
	try {
		return zonedInstant(text.replace(' ', 'T'), this.getTimezone()).toISOString();
	} catch (error) {
		const why =
			error instanceof LocalTimeError
				? error
				: new LocalTimeError(
						`cannot be read: ${(error as Error).message}`,
						'Give an ISO date and time such as 2026-03-01T09:00:00',
					);
		throw refuse(why.message, why.hint);
	}
}

/**
 * The campaign's name: Campaign Name as typed (checked by the contract's rule, so nothing is sent
 * with a name the runner would refuse), or else the workflow's name made to fit; undefined when
 * neither gives one (the runner then names it itself).
 */
export function nameOf(this: IExecuteFunctions): string | undefined {
	const typed = String(this.getNodeParameter('campaignName', 0, '') ?? '');
	if (typed.trim() === '') return fitCampaignName(String(this.getWorkflow().name ?? ''));
	const checked = campaignName.safeParse(typed);
	if (!checked.success) {
		throw new NodeOperationError(this.getNode(), `Campaign Name ${checked.error.issues[0].message}`, {
			description:
				`Nothing was sent. Give a name of 1 to ${CAMPAIGN_NAME_MAX} characters on one line, ` +
				"or leave Campaign Name empty to use the workflow's name.",
		});
	}
	return checked.data;
}

/** One recipient row as the runner reads rows (like a CSV line): phone, then the variables. */
export function rowOf(this: IExecuteFunctions, itemIndex: number): IDataObject {
	const variables = templateVariables.call(this, itemIndex);
	if (Object.prototype.hasOwnProperty.call(variables, 'phone')) {
		throw new NodeOperationError(this.getNode(), 'Variable name "phone" is reserved', {
			itemIndex,
			description: 'Nothing was sent. The recipient goes in Phone; name the variable otherwise.',
		});
	}
	const row: IDataObject = {};
	// The runner checks the phone (and rejects just this row when it is bad), so it goes as typed.
	const phone = this.getNodeParameter('phone', itemIndex, '');
	row.phone = phone === undefined || phone === null ? '' : String(phone);
	for (const [name, value] of Object.entries(variables)) {
		row[name] =
			value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
	}
	return row;
}

/**
 * The base of the Idempotency-Keys of one campaign: the workflow, the node and either the user's
 * Campaign Key or the campaign's content (settings and every row), hashed so that it fits a header.
 * It never depends on the execution: n8n's Retry of a failed execution, Retry On Fail, the node's
 * own retries and a new execution of the same input all send the same keys, so the runner answers
 * with the first campaign and nothing is sent twice (docs/decisions/nodes/campaign-key.md).
 */
export function keyBase(this: IExecuteFunctions, settings: IDataObject, rows: IDataObject[]): string {
	const node = this.getNode();
	const named = String(this.getNodeParameter('additionalFields.campaignKey', 0, '') ?? '').trim();
	const parts = [
		'campaign',
		String(this.getWorkflow().id ?? ''),
		node.name,
		...(named !== '' ? ['key', named] : ['content', JSON.stringify([settings, rows])]),
	];
	return `n8n-${createHash('sha256').update(parts.join('\u0000'), 'utf8').digest('hex').slice(0, 40)}`;
}
