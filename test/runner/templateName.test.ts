/**
 * The template's name a campaign keeps from its first send's answer (campaigns/store.ts,
 * lua/noteTemplateName-1.lua), against real Redis: kept once, read back with the campaign,
 * and never written onto a campaign that is gone (a hash of one field nothing would expire).
 * The name reaching it from a real send, and the console showing it, are console-actions.test.ts's.
 */
import { createCampaign } from '../../runner/src/core/campaigns';
import { getCampaign, noteTemplateName } from '../../runner/src/campaigns/store';
import { inlineRecords } from '../../runner/src/source';
import { positionalTemplate, useRunnerUnderTest } from './support';

const runner = useRunnerUnderTest();

test('the first name is kept and shown; a campaign that is gone gets no hash back', async () => {
	const { business, context } = runner;
	const from = business.phoneNumbers[0];
	const created = await createCampaign(
		context,
		{ templateId: positionalTemplate(business).id, from, source: 'request.json' },
		inlineRecords([{ phone: '4915200000001', 1: 'Ada', 2: 'x' }]),
	);
	if (created.kind !== 'campaign') throw new Error('expected a campaign');
	expect((await getCampaign(context, created.id)).templateName).toBeUndefined();

	await noteTemplateName(context, from, created.id, 'order_update');
	await noteTemplateName(context, from, created.id, 'renamed_later');
	expect((await getCampaign(context, created.id)).templateName).toBe('order_update');

	const gone = context.keys.campaign(from, 'cgone000000000');
	await noteTemplateName(context, from, 'cgone000000000', 'order_update');
	expect(await context.redis.exists(gone)).toBe(0);
});
