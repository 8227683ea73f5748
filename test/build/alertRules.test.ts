/**
 * The Prometheus alert rules the monitoring page ships (docs/operating/alerts.yml): promtool accepts
 * them, they fire and stay quiet as alertRules.promtool.yml says, and every series they name is one
 * the runner's /metrics exports (or `up`, which Prometheus writes for each target it scrapes).
 * The exported names come from the runner's own exposition, built against a Redis with no campaign:
 * each family still states its name there. promtool is Debian's `prometheus` package (.ci/run
 * installs it).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { parse, stringify } from 'yaml';

import { loadConfig } from '../../runner/src/config';
import { RunnerMetrics } from '../../runner/src/http/metrics';
import { createLogger } from '../../runner/src/log';
import { closeContext, openContext } from '../../runner/src/runtime';
import { uniquePrefix, useRedisServer } from '../runner/support';

const ROOT = resolve(__dirname, '../..');
const RULES = join(ROOT, 'docs/operating/alerts.yml');
const CASES = join(__dirname, 'alertRules.promtool.yml');

/** Series Prometheus itself writes for every target, which no exporter states. */
const PROMETHEUS_OWN = ['up'];

interface Rule {
	alert: string;
	expr: string;
	annotations?: Record<string, string>;
}

const rules = (parse(readFileSync(RULES, 'utf8')) as { groups: Array<{ rules: Rule[] }> }).groups.flatMap(
	(group) => group.rules,
);

function promtool(args: string[]): { status: number | null; output: string } {
	const answer = spawnSync('promtool', args, { encoding: 'utf8', timeout: 60_000 });
	if (answer.error) throw new Error('promtool is not installed: apt-get install prometheus (.ci/run does)');
	return { status: answer.status, output: answer.stdout + answer.stderr };
}

/**
 * The series an expression selects: what is left once label matchers, ranges, grouping clauses,
 * function and aggregation calls, and the set operators are taken out.
 */
function seriesNamed(expr: string): string[] {
	const bare = expr
		.replace(/"(?:[^"\\]|\\.)*"/g, '""')
		.replace(/\{[^}]*\}/g, ' ')
		.replace(/\[[^\]]*\]/g, ' ')
		.replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
	// A name followed by "(" is a function or an aggregation.
	const names = [...bare.matchAll(/([A-Za-z_:][\w:]*)(\s*\()?/g)].filter((match) => !match[2]).map((match) => match[1]);
	return names.filter((name) => !['and', 'or', 'unless', 'bool', 'offset'].includes(name));
}

/** The families of the runner's /metrics, read from its exposition against an empty prefix. */
async function exportedFamilies(): Promise<string[]> {
	const redis = await useRedisServer();
	const config = loadConfig({ REDIS_URL: redis.url, RUNNER_PREFIX: uniquePrefix() });
	const context = await openContext(config, createLogger('silent'), {
		withService: false,
		client: { waitMs: 5000 },
	});
	try {
		const text = await new RunnerMetrics(context).text();
		return [...text.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1]);
	} finally {
		await closeContext(context);
		await redis.stop();
	}
}

test('promtool accepts the rules', () => {
	const checked = promtool(['check', 'rules', RULES]);
	expect(checked.output).toContain(`SUCCESS: ${rules.length} rules found`);
	expect(checked.status).toBe(0);
});

test("the alerts fire on the runner's series when they should, and only then", () => {
	const dir = mkdtempSync(join(tmpdir(), 'convo-alert-rules-'));
	try {
		const withoutAnnotations = parse(readFileSync(RULES, 'utf8')) as { groups: Array<{ rules: Rule[] }> };
		for (const rule of withoutAnnotations.groups.flatMap((group) => group.rules)) delete rule.annotations;
		writeFileSync(join(dir, 'alerts.yml'), stringify(withoutAnnotations));
		copyFileSync(CASES, join(dir, 'cases.yml'));
		const tested = promtool(['test', 'rules', join(dir, 'cases.yml')]);
		expect(tested.output).toContain('SUCCESS');
		expect(tested.status).toBe(0);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});

test('every series an alert names is one the runner exports', async () => {
	const exported = await exportedFamilies();
	// The exposition states the runner's families and BullMQ's (a queue exists before any campaign).
	expect(exported).toEqual(expect.arrayContaining(['convo_runner_campaign_recipients', 'bullmq_jobs']));
	const named = rules.map((rule) => ({ alert: rule.alert, series: seriesNamed(rule.expr) }));
	expect(named.every(({ series }) => series.length > 0)).toBe(true);
	const unknown = named.flatMap(({ alert, series }) =>
		series
			.filter((name) => !exported.includes(name) && !PROMETHEUS_OWN.includes(name))
			.map((name) => `${alert}: ${name}`),
	);
	expect(unknown).toEqual([]);
});

test('the series reader finds the names of an expression, not its labels, functions or operators', () => {
	expect(
		seriesNamed(
			'sum by (queue) (bullmq_jobs{queue=~"send-.*", state="waiting"}) > 0 unless on (queue) ' +
				'sum by (queue) (increase(bullmq_job_completed_total{queue=~"send-.*"}[10m])) > 0',
		),
	).toEqual(['bullmq_jobs', 'bullmq_job_completed_total']);
	expect(seriesNamed('a_total / on (campaign, number) b{stage="x"} > 0.1 and on (campaign) c >= 100')).toEqual([
		'a_total',
		'b',
		'c',
	]);
});
