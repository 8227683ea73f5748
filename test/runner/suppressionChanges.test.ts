/**
 * The suppression list's changes (`{g}:supp:changed`, phone by the version of its last change) are
 * what a number's copy left behind replays. A phone added and taken off again stayed there for good,
 * so churn grew the set without bound; the feeder's tick (repairCopies) now takes out the phones no
 * longer listed once every copy holds their removal. Real Redis, the runner's own scripts; a crash
 * between the list's write and the copies is the list's own script run alone, as a dying process
 * leaves it.
 */
import { createCampaign, inlineRecords } from '../../runner/src/core/campaigns';
import { pruneChanges, repairCopies, suppress, unsuppress } from '../../runner/src/audience/suppression';
import { redisScript } from '../../runner/src/redisScripts';
import { inlineCampaign, positionalTemplate, useRunnerUnderTest } from './support';

jest.setTimeout(60_000);

const runner = useRunnerUnderTest();

const phone = (i: number) => `4917355${String(i).padStart(5, '0')}`;
const phones = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => phone(from + i));

test('the changes keep the listed phones and the removals a copy has yet to apply; the rest go once every copy holds them', async () => {
	const { context } = runner;
	const { redis, keys } = context;
	const [a, b] = runner.business.phoneNumbers;
	// A running campaign of A keeps A's copy, which every change reaches.
	await inlineCampaign(runner, 2, '49173550');
	for (const p of phones(0, 20)) await suppress(context, p, { source: 'operator' });
	for (const p of phones(0, 15)) await unsuppress(context, p);
	const held = Number(await redis.get(keys.suppression.copyVersion(a)));
	expect(held).toBe(Number(await redis.get(keys.suppression.version)));
	const changes = async () => (await redis.zrange(keys.suppression.changed, 0, -1)).sort();
	expect(await changes()).toEqual(phones(0, 20));

	// A process dies between the list's write and the copies: phone 15 leaves the list, A's copy still has it.
	await redisScript(redis, 'changeSuppression')(
		[keys.suppression.entries, keys.suppression.listed, keys.suppression.changed, keys.suppression.version],
		['remove', context.config.RUNNER_MAX_SUPPRESSIONS, phone(15)],
	);
	// Pruned to where A's copy stands, 4 phones a call: the removals it holds go, the one it lacks stays.
	expect(await pruneChanges(context, held, 4)).toBe(15);
	expect(await changes()).toEqual(phones(15, 20));
	expect(await redis.hexists(keys.suppression.copy(a), phone(15))).toBe(1);
	// The next prune starts where this one stopped; an older version moves nothing.
	expect(await redis.get(keys.suppression.pruned)).toBe(String(held));
	expect(await pruneChanges(context, held - 5, 4)).toBe(0);
	expect(await redis.get(keys.suppression.pruned)).toBe(String(held));

	// The feeder's tick brings A's copy up (phone 15 leaves it), then prunes to where every copy stands.
	await repairCopies(context);
	expect(await redis.hexists(keys.suppression.copy(a), phone(15))).toBe(0);
	expect(await changes()).toEqual(phones(16, 20));
	expect(await repairCopies(context).then(changes)).toEqual(phones(16, 20));

	// A number's new copy replays the changes: it holds exactly the phones listed.
	const created = await createCampaign(
		context,
		{ templateId: positionalTemplate(runner.business).id, from: b, source: 'request.json' },
		inlineRecords([{ phone: '4917356000001', 1: 'x', 2: 'y' }]),
	);
	expect(created.kind).toBe('campaign');
	expect((await redis.hkeys(keys.suppression.copy(b))).sort()).toEqual(phones(16, 20));

	// A phone listed again and taken off again is looked at again, at its new version.
	await suppress(context, phone(3), { source: 'operator' });
	await unsuppress(context, phone(3));
	expect(await changes()).toEqual([phone(3), ...phones(16, 20)]);
	await repairCopies(context);
	expect(await changes()).toEqual(phones(16, 20));
});
