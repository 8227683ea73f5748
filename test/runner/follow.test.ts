/**
 * `--wait`'s end (cli/follow.ts) against real Redis, no runner process: an ended campaign's state
 * changes before its pending recipients move, and the command follows it until they have moved.
 */
import { finishPending } from '../../runner/src/campaigns/control';
import { transition } from '../../runner/src/campaigns/state';
import { follow } from '../../runner/src/cli/follow';
import type { CampaignStatus } from '../../runner/src/core/campaigns';
import { inlineCampaign, useRunnerUnderTest } from './support';

jest.setTimeout(60_000);

const runner = useRunnerUnderTest();
/** How often the follower reads the campaign here, and how many of its reads must not end it. */
const INTERVAL_MS = 50;
const READS = 10;

test('--wait on a campaign that failed ends once its pending recipients have moved, with the final counts', async () => {
	const id = await inlineCampaign(runner, 5, '4915170');
	// The first step of an end (control.ts endWithPending), before its second moves the pending ones.
	await transition(
		runner.context,
		id,
		['running'],
		'failed',
		{ finished_at: Date.now(), last_error: '404' },
		{
			ending: true,
		},
	);
	let ended: CampaignStatus | undefined;
	const following = follow(runner.context, id, { intervalMs: INTERVAL_MS }).then((status) => (ended = status));
	await new Promise((resolve) => setTimeout(resolve, READS * INTERVAL_MS));
	expect(ended).toBeUndefined();
	expect(await finishPending(runner.context, id)).toBe(5);
	const status = await following;
	expect(status.state).toBe('failed');
	expect(status.counts).toMatchObject({ pending: 0, not_sent: 5, sent: 0 });
});
