/**
 * Campaign → Create's Start Time and End Time without an offset, through n8n-core against a real
 * `convo-runner start` and the sandbox, in a workflow whose time zone has a daylight-saving change
 * that day: the runner gets the instant the wall clock names (Europe/Berlin's spring day, New York's
 * autumn day); a time the clocks skip fails the node naming the field, and nothing is created.
 */
import type { IDataObject } from 'n8n-workflow';

import { convoNode, itemsThen, runWorkflow } from '../harness/workflow';
import { positionalTemplate, startApi, useRunnerUnderTest } from '../runner/support';
import { campaignCreateParameters } from './support';

jest.setTimeout(120_000);

const TOKEN = 'start-time-token-0123456789abcdef';
const runner = useRunnerUnderTest({ RUNNER_TOKEN: TOKEN });
let base = '';

beforeAll(async () => {
	base = await startApi(runner);
});

const items: IDataObject[] = [{ phone: '+4917655000101', name: 'Ada', order: '#1' }];

/** Create with Dry Run in a workflow of `timezone`: what the runner answered, or the node's error. */
async function dryRunIn(timezone: string, additionalFields: IDataObject) {
	const parameters = campaignCreateParameters(runner.business, positionalTemplate(runner.business).id, {
		additionalFields,
		options: { dryRun: true },
	});
	const result = await runWorkflow(
		{ ...itemsThen(items, convoNode(parameters)), timezone },
		{ credentials: { convoRunnerApi: { runnerUrl: base, token: TOKEN } } },
	);
	return {
		error: result.errorOf('Convo'),
		answer: result.outputOf('Convo')[0]?.json as (IDataObject & { estimate: { starts_at: string } }) | undefined,
	};
}

test("Start Time on a daylight-saving day is the instant the workflow zone's clock names", async () => {
	const berlin = await dryRunIn('Europe/Berlin', { startAt: '2027-03-28T01:30:00' });
	expect(berlin.error).toBeUndefined();
	expect(berlin.answer?.estimate.starts_at).toBe('2027-03-28T00:30:00.000Z');

	// 01:30 comes twice in New York that night: the first, still daylight time (UTC-4).
	const newYork = await dryRunIn('America/New_York', { startAt: '2027-11-07T01:30:00', endAt: '2027-11-07T03:00:00' });
	expect(newYork.error).toBeUndefined();
	expect(newYork.answer?.estimate.starts_at).toBe('2027-11-07T05:30:00.000Z');
});

test('A Start Time the clocks skip fails the node naming the field; nothing is created', async () => {
	const { error } = await dryRunIn('Europe/Berlin', { startAt: '2027-03-28T02:30:00' });
	expect(error?.message).toBe(
		'Start Time "2027-03-28T02:30:00" does not exist in Europe/Berlin: the clocks jump forward past it that day',
	);
	expect((error as { description?: string } | undefined)?.description).toContain('such as 03:30');
	const { error: endError } = await dryRunIn('America/New_York', { endAt: '2027-03-14T02:15:00' });
	expect(endError?.message).toBe(
		'End Time "2027-03-14T02:15:00" does not exist in America/New_York: the clocks jump forward past it that day',
	);
	const listed = (await (
		await fetch(`${base}/api/campaigns`, { headers: { authorization: `Bearer ${TOKEN}` } })
	).json()) as { total: number };
	expect(listed.total).toBe(0);
});
