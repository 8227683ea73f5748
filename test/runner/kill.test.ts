/**
 * Guarantees 1 to 3 across a crash: a worker killed with SIGKILL mid-campaign, another started.
 * Counted in the sandbox's own log: no recipient has two messages; every recipient ends final;
 * the unknowns are at most the sends the dead worker had in flight; reconcile marks each one as
 * the log says; retry --not-sent completes the campaign, still without a duplicate.
 */
import { createCampaign, campaignStatus, reconcileCampaign, retryNotSent } from '../../runner/src/core/campaigns';
import {
	positionalTemplate,
	report,
	sendsByPhone,
	setFault,
	templateSends,
	useRunnerUnderTest,
	waitFor,
	writeRecipientsCsv,
} from './support';

jest.setTimeout(360_000);

const CONCURRENCY = 10;
// The dead process's jobs come back once BullMQ sees them stalled (two job locks) and the feeder's
// watch sees no progress: both shortened from their 15 s defaults, which the guarantees do not depend on.
const runner = useRunnerUnderTest({
	RUNNER_CONCURRENCY: String(CONCURRENCY),
	RUNNER_JOB_LOCK: '3s',
	RUNNER_FEEDER_STALL: '3s',
	// The smallest room: a start's answer is stale after 5 ms, so a claimed send whose answer or send
	// comes later retakes its start, the path a smaller room adds (the container test kills at the default).
	RUNNER_RATE_ROOM: '10ms',
});

const completed = (id: string) => async () => {
	const status = await campaignStatus(runner.context, id);
	return status.state === 'completed' ? status : undefined;
};

test('SIGKILL mid-campaign: no duplicate, nothing lost, unknowns reconciled from the service, retry completes', async () => {
	// Latency keeps sends in flight at the moment of the kill.
	await setFault(runner.sandbox, { endpoint: 'POST /api/external/v2/send-template', latencyMs: 80 });
	const { path, phones } = writeRecipientsCsv(2000, { seed: 2 });
	// The process killed is `start` (workers, feeder and schedules): whatever it was doing is taken up by the worker started after it.
	const first = runner.spawnWorker({}, 'start');
	const created = await createCampaign(runner.context, {
		templateId: positionalTemplate(runner.business).id,
		from: runner.business.phoneNumbers[0],
		source: path,
		rate: 150,
	});
	if (created.kind !== 'campaign') throw new Error('expected a campaign');

	await waitFor(
		'600 sends before the kill',
		async () => (await templateSends(runner.sandbox)).length >= 600,
		60_000,
		50,
	);
	await first.kill('SIGKILL');
	const atKill = (await campaignStatus(runner.context, created.id)).counts;
	expect(atKill.pending).toBeGreaterThan(0);
	runner.spawnWorker();

	const status = await waitFor('the campaign to complete after the kill', completed(created.id), 150_000);
	expect(status.counts.pending + status.counts.claimed).toBe(0);
	let sends = await templateSends(runner.sandbox);
	const duplicates = [...sendsByPhone(sends).values()].filter((list) => list.length > 1);
	expect(duplicates).toEqual([]);
	// Only the sends the dead worker had claimed can be unknown.
	expect(status.counts.unknown).toBeLessThanOrEqual(CONCURRENCY);
	// The kill caught sends in flight (80 ms each at 150/s), so reconcile has work to prove.
	expect(status.counts.unknown).toBeGreaterThan(0);
	expect(status.counts.sent + status.counts.unknown).toBe(2000);

	const unknownPhones = (await report(runner.context, created.id))
		.filter((row) => row.outcome === 'unknown')
		.map((row) => row.phone);
	const reconciled = await reconcileCampaign(runner.context, created.id);
	expect(reconciled.checked).toBe(unknownPhones.length);
	expect(reconciled.still_unknown).toBe(0);
	const byPhone = sendsByPhone(sends);
	const rows = await report(runner.context, created.id);
	for (const phone of unknownPhones) {
		const row = rows.find((r) => r.phone === phone);
		const received = byPhone.get(phone) ?? [];
		if (received.length === 1)
			expect({ phone, outcome: row?.outcome, id: row?.message_id }).toEqual({
				phone,
				outcome: 'sent',
				id: received[0].uuid,
			});
		else
			expect({ phone, outcome: row?.outcome, received: received.length }).toEqual({
				phone,
				outcome: 'not_sent',
				received: 0,
			});
	}

	const retried = await retryNotSent(runner.context, created.id);
	expect(retried.requeued).toBe(reconciled.not_sent);
	// Recipients whose job the dead process still held are fed again once BullMQ recovers that job (two job locks).
	const final = await waitFor('the retried campaign to complete', completed(created.id), 120_000);
	expect(final.counts.sent).toBe(2000);
	sends = await templateSends(runner.sandbox);
	expect(sends).toHaveLength(2000);
	expect(new Set(sends.map((message) => message.to))).toEqual(new Set(phones));
	const finalRows = await report(runner.context, created.id);
	const finalByPhone = sendsByPhone(sends);
	for (const row of finalRows) expect(row.message_id).toBe(finalByPhone.get(row.phone)?.[0].uuid);
});
