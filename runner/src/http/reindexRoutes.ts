/** The reindex routes of the control API: thin over its doors in core/, the same settings as `reindex run`. */
import { reindexRunAnswer, runnerIdParams, startReindexBody } from 'convo-contract';
import { z } from 'zod/v4';

import type { RunnerContext } from '../context';
import * as core from '../core/reindex';
import { FieldError, NotFoundError } from '../errors';
import { at, cronScheduleAnswer, InputError, type RouteTable } from './routes';

const id = runnerIdParams('reindex run or schedule');

/** A cron schedule as lists show it (reindex/create.ts scheduleView): never its sealed source URL. */
const scheduleAnswer = cronScheduleAnswer.extend({
	collection: z.string(),
	source: z.string(),
	origin: z.enum(['api', 'cli']),
	format: z.string(),
	id_field: z.string(),
	embedding: z.record(z.string(), z.unknown()).nullable(),
	deactivate_missing: z.boolean(),
	force: z.boolean(),
	max_deactivate: z.string(),
	force_deactivate: z.boolean(),
	rate_limit: z.number(),
});
const listAnswer = z.object({ runs: z.array(reindexRunAnswer), schedules: z.array(scheduleAnswer) });
const line = z.int().min(1);
/** The run as GET shows it, with its settings and the notes of what went wrong. */
const reportAnswer = reindexRunAnswer.extend({
	source: z.string(),
	rejected_rows: z.array(z.looseObject({ line, reason: z.string() })),
	failures: z.array(z.looseObject({ external_id: z.string(), line: line.nullable(), error: z.string() })),
	mismatches: z.array(
		z.looseObject({ external_id: z.string(), line: line.nullable(), expected: z.string(), got: z.string() }),
	),
	foreign_items: z.array(z.string()),
});

export function reindexRoutes(routes: RouteTable, context: RunnerContext): void {
	/**
	 * The API's create: settings named as its JSON fields, a 400's
	 * `field` set, local files only inside RUNNER_SOURCE_DIR.
	 */
	async function createReindex(input: core.ReindexInput): Promise<core.ReindexAnswer> {
		try {
			return await core.createReindex(context, input, core.API_REINDEX);
		} catch (error) {
			if (error instanceof FieldError) throw new InputError(error.message, error.field);
			throw error;
		}
	}

	routes.add(
		{
			...at('startReindex'),
			tag: 'reindex',
			summary:
				'Start a reindex run of a search collection from a feed (with cron: a schedule; with dry_run: ' +
				'what a run would do, nothing written)',
			body: startReindexBody,
			success: [201, "the run status, the schedule, or the dry run's counts; 409 while the collection is being synced"],
		},
		async ({ body }) => {
			const answer = await createReindex({
				collection: body.collection_id,
				source: body.source,
				format: body.format,
				idField: body.id_field,
				embedding: body.embedding_json,
				deactivateMissing: body.deactivate_missing,
				force: body.force,
				maxDeactivate: body.max_deactivate,
				forceDeactivate: body.force_deactivate,
				dryRun: body.dry_run,
				rate: body.rate,
				cron: body.cron,
				tz: body.tz,
			});
			return answer.kind === 'run' ? { kind: 'run' as const, ...core.reindexStatusOf(answer.status) } : answer;
		},
	);
	routes.add(
		{
			method: 'GET',
			url: '/api/reindex',
			operationId: 'listReindexRuns',
			tag: 'reindex',
			summary: 'Reindex runs, newest first, and cron schedules',
			success: [200, '{ runs, schedules }'],
			answer: listAnswer,
		},
		async () => ({
			runs: await core.listReindexRuns(context),
			schedules: await core.listReindexSchedules(context),
		}),
	);
	routes.add(
		{
			...at('getReindexRun'),
			tag: 'reindex',
			summary: 'State, counts, rate, ETA and last error of a run',
			params: id,
			success: [200, '{ id, state, counts, rate, eta_seconds, last_error }'],
		},
		async ({ params }) => core.reindexStatus(context, params.id),
	);
	routes.add(
		{
			method: 'GET',
			url: '/api/reindex/:id/report',
			operationId: 'reindexReport',
			tag: 'reindex',
			summary: 'The run with its deactivation note, rejected rows, failures, mismatches and foreign items',
			params: id,
			success: [200, 'the report'],
			answer: reportAnswer,
		},
		async ({ params }) => core.reindexReport(context, params.id),
	);
	routes.add(
		{
			method: 'DELETE',
			url: '/api/reindex/schedules/:id',
			operationId: 'removeReindexSchedule',
			tag: 'reindex',
			summary: 'Stop a reindex cron schedule (its past runs stay)',
			params: id,
			success: [200, '{ id, removed }'],
			answer: z.object({ id: z.string(), removed: z.literal(true) }),
		},
		async ({ params }) => {
			if (!(await core.removeReindexSchedule(context, params.id)))
				throw new NotFoundError(`No reindex schedule with id ${params.id}`);
			return { id: params.id, removed: true } as const;
		},
	);
	for (const [action, operationId, summary] of [
		[
			'pause',
			'pauseReindexSchedule',
			'Pause a reindex cron schedule: it starts no run until resumed (a paused one is answered as it is)',
		],
		[
			'resume',
			'resumeReindexSchedule',
			'Resume a paused reindex cron schedule from its next time (the times it missed are not made up)',
		],
	] as const) {
		routes.add(
			{
				method: 'POST',
				url: `/api/reindex/schedules/:id/${action}`,
				operationId,
				tag: 'reindex',
				summary,
				params: id,
				success: [200, 'the schedule, as GET /api/reindex lists it'],
				answer: scheduleAnswer,
			},
			async ({ params }) => {
				const schedule = await core.pauseOrResumeReindexSchedule(context, params.id, action);
				if (!schedule) throw new NotFoundError(`No reindex schedule with id ${params.id}`);
				return schedule;
			},
		);
	}
}
