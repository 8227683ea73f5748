/** `reindex run|status|report|list|pause|resume|unschedule`: keep a search collection in sync with a feed. */
import type { Command } from 'commander';

import * as core from '../core/reindex';
import { UserError } from '../errors';
import { answer, runs } from './command';
import { followReindex } from './follow';
import { addScheduleAndWait, formatOption, rateOption, type RunOptions } from './runOptions';

function describeRun(status: core.ReindexOverview): string {
	const c = status.counts;
	return [
		`${status.id}: ${status.state} | collection ${status.collection} | read ${c.read}, unchanged ${c.unchanged}, ` +
			`created ${c.created}, updated ${c.updated}, deactivated ${c.deactivated}, ` +
			`rejected ${c.rejected}, failed ${c.failed}`,
		...(status.mismatched > 0
			? [`  ${status.mismatched} answers other than expected (reindex report ${status.id})`]
			: []),
		...(status.deactivation ? [`  deactivation ${status.deactivation}`] : []),
		...(status.last_error ? [`  ${status.last_error}`] : []),
	].join('\n');
}

/**
 * A followed run that did not complete is not a success, though its status is printed: exit 1, the reason on stderr.
 */
function exitForEnd(status: core.ReindexOverview): void {
	if (status.state === 'completed') return;
	const why = status.last_error ? `: ${status.last_error}` : '';
	process.stderr.write(`convo-runner: reindex run ${status.id} ended ${status.state}${why}\n`);
	process.exitCode = 1;
}

interface RunCommandOptions extends RunOptions {
	collection: string;
	source: string;
	idField: string;
	embeddingJson?: string;
	deactivateMissing?: boolean;
	force?: boolean;
	maxDeactivate?: string;
	forceDeactivate?: boolean;
	dryRun?: boolean;
}

/** A dry run's answer as a person reads it. */
function describeDryRun(dry: core.ReindexDryRun): string {
	const c = dry.counts;
	return [
		`dry run (nothing written) | collection ${dry.collection} | read ${c.read}, unchanged ${c.unchanged}, ` +
			`created ${c.created}, updated ${c.updated}, deactivated ${c.deactivated}, rejected ${c.rejected}`,
		`  deactivation ${dry.deactivation}`,
		...dry.rejected_rows.map((row) => `  rejected: line ${row.line} ${row.reason}`),
		...(dry.rejected_rows.length < c.rejected
			? [`  (the first ${dry.rejected_rows.length} rejected rows are shown)`]
			: []),
	].join('\n');
}

export function addReindexCommands(program: Command): void {
	const reindex = program
		.command('reindex')
		.description('keep a search collection in sync with a feed, sending only what changed');

	const run = reindex
		.command('run')
		.description('store a reindex run and print its id; the runner processes do the work')
		.requiredOption('--collection <id>', 'search collection id (UUID)')
		.requiredOption('--source <path-or-url>', 'the feed: a file or an http(s) URL')
		.addOption(formatOption('feed', ['json', 'ndjson', 'csv']))
		.requiredOption('--id-field <field>', "the field holding each item's id (external_id)")
		.option('--embedding-json <file>', 'a JSON object sent as embedding_json with every item')
		.option('--deactivate-missing', 'after a complete read, deactivate the items the feed no longer holds')
		.option('--force', 'upsert every item, changed or not')
		.option(
			'--max-deactivate <limit>',
			'with --deactivate-missing: stop, deactivating nothing, if more than this would be deactivated: ' +
				'a share of the active items (10%) or a number of items (50)',
			'10%',
		)
		.option(
			'--force-deactivate',
			'with --deactivate-missing: deactivate however many that is (no --max-deactivate limit)',
		)
		.option(
			'--dry-run',
			'read the feed and answer what a run would do (counts, rejected rows, the --max-deactivate verdict), ' +
				'writing and sending nothing',
		)
		.addOption(rateOption(`upserts per second (default ${core.DEFAULT_REINDEX_RATE})`));
	runs<RunCommandOptions>(
		addScheduleAndWait(run, { rereads: 'feed', follows: 'run' }),
		async ({ context, io, options }) => {
			const {
				collection,
				source,
				format,
				idField,
				embeddingJson,
				deactivateMissing,
				force,
				maxDeactivate,
				forceDeactivate,
				dryRun,
				rate,
				cron,
				tz,
			} = options;
			const created = await core.createReindex(context, {
				collection,
				source,
				format,
				idField,
				embeddingJson,
				deactivateMissing: Boolean(deactivateMissing),
				force: Boolean(force),
				maxDeactivate,
				forceDeactivate: Boolean(forceDeactivate),
				dryRun: Boolean(dryRun),
				rate,
				cron,
				tz,
			});
			if (created.kind === 'dry_run') return answer(created, () => describeDryRun(created));
			if (created.kind === 'schedule') {
				return answer(
					created,
					() =>
						`schedule ${created.schedule.id}: ${created.schedule.cron} (${created.schedule.tz}); ` +
						'each firing is a run of its own (reindex list)',
				);
			}
			const shouldFollow = options.wait || (!io.json && process.stderr.isTTY);
			const overview = shouldFollow ? await followReindex(context, created.status.id) : created.status;
			if (shouldFollow) exitForEnd(overview);
			return answer(core.reindexStatusOf(overview), () => describeRun(overview));
		},
		{ withService: (options) => Boolean(options.dryRun) },
	);

	runs(
		reindex
			.command('status <id>')
			.description('state, counts, current rate and ETA of a run')
			.option('--wait', 'follow until it settles'),
		async ({ context, args: [id], options }) => {
			const overview = options.wait ? await followReindex(context, id) : await core.reindexOverview(context, id);
			if (options.wait) exitForEnd(overview);
			return answer(core.reindexStatusOf(overview), () => describeRun(overview));
		},
	);

	runs(
		reindex
			.command('report <id>')
			.description('counts, what became of --deactivate-missing and why, rejected rows, failures, mismatches'),
		async ({ context, args: [id] }) => {
			const report = await core.reindexReport(context, id);
			return answer(report, () =>
				[
					describeRun(report),
					...report.rejected_rows.map((row) => `  rejected: line ${row.line} ${row.reason}`),
					...report.failures.map(
						(row) => `  failed: ${row.external_id}${row.line ? ` (line ${row.line})` : ''}: ${row.error}`,
					),
					...report.mismatches.map(
						(row) => `  mismatch: ${row.external_id}: expected ${row.expected}, the service said ${row.got}`,
					),
					...report.foreign_items.map(
						(external) => `  at the service, never sent by the runner (left alone): ${external}`,
					),
					...(report.notes_truncated ? ['  (only the first notes of each kind are kept)'] : []),
				].join('\n'),
			);
		},
	);

	runs(reindex.command('list').description('reindex runs, newest first, and cron schedules'), async ({ context }) => {
		const runList = await core.listReindexRuns(context);
		const schedules = await core.listReindexSchedules(context);
		return answer(
			{ runs: runList, schedules },
			() =>
				[
					...schedules.map(
						(s) =>
							`schedule ${s.id}: ${s.cron} (${s.tz}) ${s.source} -> ${s.collection}` +
							(s.state === 'paused' ? ' (paused)' : ''),
					),
					...runList.map(describeRun),
				].join('\n') || 'no reindex runs',
		);
	});

	for (const [name, description] of [
		['pause', 'pause a cron schedule: it starts no run until resumed'],
		['resume', 'resume a paused cron schedule from its next time'],
	] as const) {
		runs(reindex.command(`${name} <schedule-id>`).description(description), async ({ context, args: [id] }) => {
			const schedule = await core.pauseOrResumeReindexSchedule(context, id, name);
			if (!schedule) throw new UserError(`No reindex schedule with id ${id}`);
			const next = schedule.next_run_at === null ? '' : `, next run ${schedule.next_run_at}`;
			return answer(schedule, () => `schedule ${id}: ${schedule.state}${next}`);
		});
	}

	runs(
		reindex.command('unschedule <schedule-id>').description('stop a cron schedule (its past runs stay)'),
		async ({ context, args: [id] }) => {
			if (!(await core.removeReindexSchedule(context, id))) throw new UserError(`No reindex schedule with id ${id}`);
			return answer({ id, removed: true }, () => `${id}: removed`);
		},
	);
}
