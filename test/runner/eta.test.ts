/**
 * A campaign's rate and ETA right after a resume, against real Redis through core (no runner
 * process sends here, so the sends per second are written as the settle script writes them): the
 * seconds it sat paused do not count, so the ETA does not jump up after a resume. The sleeps are
 * lower bounds only, and the seconds written run past the status read, so a busy machine changes
 * nothing the test checks.
 */
import { campaignStatus, createCampaign, pauseCampaign, resumeCampaign } from '../../runner/src/core/campaigns';
import { inlineRecords } from '../../runner/src/source';
import { positionalTemplate, useRunnerUnderTest } from './support';

jest.setTimeout(60_000);

const runner = useRunnerUnderTest();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('after a resume the rate counts only the seconds since, not the paused ones', async () => {
	const business = runner.business;
	const from = business.phoneNumbers[0];
	const rows = Array.from({ length: 100 }, (_, i) => ({ phone: `4915170${String(i).padStart(5, '0')}`, 1: `R${i}` }));
	const created = await createCampaign(
		runner.context,
		{ templateId: positionalTemplate(business).id, from, source: 'request.json' },
		inlineRecords(rows),
	);
	if (created.kind !== 'campaign') throw new Error('expected a campaign');
	const { id } = created;
	await pauseCampaign(runner.context, id);
	// Paused past a second's boundary: a rate counted from the create would take in a second without sends.
	await sleep(1100);
	// Taken before the resume, so the second it happens in is always among those written below.
	const resumedSecond = Math.floor(Date.now() / 1000);
	await resumeCampaign(runner.context, id);
	// At least one full second since the resume.
	await sleep(1100);
	// 5 sends in every second from the resume on, as settles count them: up to 10 s past now too (the
	// rate reads at most the last 10 full seconds), so a status read late still finds them all written.
	const now = Math.floor(Date.now() / 1000);
	for (let second = resumedSecond; second < now + 10; second++)
		await runner.context.redis.hincrby(runner.context.keys.ticks(from, id), String(second), 5);
	const status = await campaignStatus(runner.context, id);
	expect(status.state).toBe('running');
	expect(status.rate).toBe(5);
	expect(status.eta_seconds).toBe(20);
});
