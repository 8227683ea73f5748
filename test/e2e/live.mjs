/* global fetch, setTimeout */
// The live step of the e2e run (under Node 24 for node:sqlite), in phases called by live.sh:
//   reply               registers the reply example's production URL with the sandbox, sends an
//                       inbound message, waits for the delivery and n8n's execution: live-reply.json
//   runner-registered   waits until both Convo Runner Triggers registered their URLs with the runner
//                       (exit 1 if it never does): live-runner.json
//   campaign-finished   waits for the campaign example's campaign to finish and for the summary
//                       workflow's execution it starts: live-campaign.json
//   delivery-settled    waits for the follow-up workflow's execution that the same campaign's
//                       campaign.delivery_settled starts, then a while for a second: live-settled.json
//   node live.mjs <phase> <outDir> <n8nUrl> <n8nSqlitePath | postgres://user@host:port/db>
// <n8nUrl> serves the production webhooks: `n8n start`, or in queue mode the webhook processor.
// Env: E2E_RUNNER_TOKEN (the runner's bearer token), E2E_N8N_DIR (n8n's install, for `flatted`).
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';

const [phase, outDir, n8nUrl, dbPath] = process.argv.slice(2);
const manifest = JSON.parse(readFileSync(join(outDir, 'manifest.json'), 'utf8'));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const workflow = (file) => manifest.workflows.find((w) => w.file === file);

async function sandbox(method, path, body) {
	const response = await fetch(`${manifest.baseUrl}${path}`, {
		method,
		headers: body === undefined ? {} : { 'content-type': 'application/json' },
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status} ${await response.text()}`);
	return await response.json();
}

async function runner(path) {
	const response = await fetch(`${manifest.runnerUrl}${path}`, {
		headers: { authorization: `Bearer ${process.env.E2E_RUNNER_TOKEN}` },
	});
	if (!response.ok) throw new Error(`GET ${path}: HTTP ${response.status} ${await response.text()}`);
	return await response.json();
}

/** n8n keeps run data as `flatted` JSON; its own copy of the package reads it. */
function runDataOf(text) {
	const require = createRequire(join(process.env.E2E_N8N_DIR, 'package.json'));
	return require('flatted').parse(text);
}

/** Executions of a workflow from n8n's database (SQLite, or PostgreSQL in queue mode), oldest first, with their run data. */
async function executionsOf(workflowId) {
	if (dbPath.startsWith('postgres://')) {
		const require = createRequire(join(process.env.E2E_N8N_DIR, 'package.json'));
		const { Client } = require('pg');
		const client = new Client({ connectionString: dbPath });
		await client.connect();
		try {
			const { rows } = await client.query(
				`SELECT e.id, e.status, e.mode, d.data FROM execution_entity e LEFT JOIN execution_data d ON d."executionId" = e.id
				 WHERE e."workflowId" = $1 ORDER BY e.id`,
				[workflowId],
			);
			return rows.map((row) => ({ id: String(row.id), status: row.status, mode: row.mode, data: row.data }));
		} finally {
			await client.end();
		}
	}
	const db = new DatabaseSync(dbPath, { readOnly: true });
	try {
		const rows = db
			.prepare(
				`SELECT e.id, e.status, e.mode, d.data FROM execution_entity e LEFT JOIN execution_data d ON d.executionId = e.id
				 WHERE e.workflowId = ? ORDER BY e.id`,
			)
			.all(workflowId);
		return rows.map((row) => ({ id: String(row.id), status: row.status, mode: row.mode, data: row.data }));
	} finally {
		db.close();
	}
}

/** Polls until `check` returns something; undefined after `tries` x `everyMs`. */
async function poll(check, tries, everyMs = 250) {
	for (let i = 0; i < tries; i++) {
		const value = await check().catch(() => undefined);
		if (value) return value;
		await sleep(everyMs);
	}
	return undefined;
}

/** Items each node output in the execution's last run: { nodeName: [json, ...] }. */
function outputsOf(execution) {
	const run = runDataOf(execution.data);
	const runData = run.resultData?.runData ?? {};
	return {
		error: run.resultData?.error?.message,
		nodes: Object.fromEntries(
			Object.entries(runData).map(([name, runs]) => [
				name,
				(runs.at(-1)?.data?.main?.[0] ?? []).map((item) => item.json),
			]),
		),
	};
}

async function reply() {
	const wf = workflow('reply-to-inbound-message.json');
	const trigger = wf.nodes.find((node) => node.type === `${manifest.packTypePrefix}convoTrigger`);
	const url = `${n8nUrl}/webhook/${trigger.webhookId}/convo`;
	const result = { url, text: `e2e inbound ${Date.now()}` };
	// n8n can answer 404 for a moment after activation; an empty body is refused with 400 and starts nothing.
	result.probeStatus = await poll(
		async () => {
			const status = (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }))
				.status;
			return status !== 404 ? status : undefined;
		},
		60,
		500,
	);
	await sandbox('POST', '/__sandbox/webhooks', { business: manifest.business, url, method: 'POST' });
	await sandbox('POST', '/__sandbox/inbound', {
		business: manifest.business,
		from: '+49 151 1234 0001',
		text: result.text,
	});
	result.delivery = await poll(async () => {
		const deliveries = await sandbox('GET', `/__sandbox/webhooks/deliveries?business=${manifest.business}`);
		return (Array.isArray(deliveries) ? deliveries : deliveries.deliveries).find(
			(d) => d.url === url && (d.statusCode !== undefined || d.error !== undefined),
		);
	}, 60);
	if (result.delivery) delete result.delivery.body;
	// The execution is saved after the webhook answered (responseMode onReceived): poll for it.
	const executions = await poll(async () => {
		const found = await executionsOf(wf.id);
		return found.some((e) => e.status !== 'running' && e.status !== 'new') ? found : undefined;
	}, 120);
	// The reply is a message_created too (status sent); the trigger must not start on it: wait a moment, count again.
	await sleep(2000);
	const all = await executionsOf(wf.id);
	result.executions = all.map(({ id, status, mode }) => ({ id, status, mode }));
	if (executions) result.execution = { status: all.at(-1).status, count: all.length, ...outputsOf(all.at(-1)) };
	result.messages = (await sandbox('GET', `/__sandbox/messages?business=${manifest.business}`)).filter(
		(m) => m.to === '4915112340001' && m.source !== 'template',
	);
	writeFileSync(join(outDir, 'live-reply.json'), JSON.stringify(result, null, 2));
}

/** The published examples whose Convo Runner Trigger registers itself with the runner. */
const RUNNER_TRIGGERED = ['campaign-finished-summary.json', 'campaign-delivery-settled-followup.json'];

async function runnerRegistered() {
	const ids = RUNNER_TRIGGERED.map(
		(file) =>
			workflow(file).nodes.find((node) => node.type === `${manifest.packTypePrefix}convoRunnerTrigger`).webhookId,
	);
	const webhooks = await poll(
		async () => {
			const { webhooks: list } = await runner('/api/webhooks');
			return ids.every((id) => list.some((hook) => hook.url.includes(id))) ? list : undefined;
		},
		120,
		500,
	);
	const result = {
		webhookIds: Object.fromEntries(RUNNER_TRIGGERED.map((file, i) => [file, ids[i]])),
		webhooks: webhooks ?? (await runner('/api/webhooks')).webhooks,
	};
	writeFileSync(join(outDir, 'live-runner.json'), JSON.stringify(result, null, 2));
	if (!webhooks) process.exit(1);
}

async function campaignFinished() {
	const result = {};
	const { campaigns = [], items = [] } = await runner('/api/campaigns?limit=10');
	const newest = [...campaigns, ...items][0];
	result.campaignId = newest?.id;
	if (result.campaignId) {
		result.campaign = await poll(
			async () => {
				const status = await runner(`/api/campaigns/${result.campaignId}`);
				return ['completed', 'cancelled', 'failed'].includes(status.state) ? status : undefined;
			},
			240,
			500,
		);
	}
	const summary = workflow('campaign-finished-summary.json');
	const executions = await poll(
		async () => {
			const found = await executionsOf(summary.id);
			return found.some((e) => e.status !== 'running' && e.status !== 'new') ? found : undefined;
		},
		240,
		500,
	);
	// A second delivery of the same event would start a second execution: wait a moment, count again.
	await sleep(2000);
	const all = await executionsOf(summary.id);
	result.executions = all.map(({ id, status, mode }) => ({ id, status, mode }));
	if (executions) result.execution = { status: all.at(-1).status, count: all.length, ...outputsOf(all.at(-1)) };
	result.messages = (await sandbox('GET', `/__sandbox/messages?business=${manifest.business}`)).filter(
		(m) => m.source === 'template',
	);
	writeFileSync(join(outDir, 'live-campaign.json'), JSON.stringify(result, null, 2));
}

/**
 * The campaign's delivery settles once the runner's checks saw every message final (read, on
 * the sandbox's default timeline): campaign.delivery_settled starts the follow-up example. A second
 * delivery of the event would start a second execution: after the first, wait past the tracking
 * schedule's last step and count again.
 */
async function deliverySettled() {
	const result = {};
	const { campaigns = [], items = [] } = await runner('/api/campaigns?limit=10');
	result.campaignId = [...campaigns, ...items][0]?.id;
	const followup = workflow('campaign-delivery-settled-followup.json');
	const started = Date.now();
	const executions = await poll(
		async () => {
			const found = await executionsOf(followup.id);
			return found.some((e) => e.status !== 'running' && e.status !== 'new') ? found : undefined;
		},
		240,
		500,
	);
	result.waitedMs = Date.now() - started;
	await sleep(8000);
	const all = await executionsOf(followup.id);
	result.executions = all.map(({ id, status, mode }) => ({ id, status, mode }));
	if (executions) result.execution = { status: all.at(-1).status, count: all.length, ...outputsOf(all.at(-1)) };
	if (result.campaignId) result.campaign = await runner(`/api/campaigns/${result.campaignId}`);
	result.messages = (await sandbox('GET', `/__sandbox/messages?business=${manifest.business}`)).filter(
		(m) => m.source === 'template',
	);
	writeFileSync(join(outDir, 'live-settled.json'), JSON.stringify(result, null, 2));
}

const phases = {
	reply,
	'runner-registered': runnerRegistered,
	'campaign-finished': campaignFinished,
	'delivery-settled': deliverySettled,
};
if (!phases[phase]) {
	console.error(`unknown phase ${phase}; one of ${Object.keys(phases).join(', ')}`);
	process.exit(2);
}
try {
	await phases[phase]();
} catch (error) {
	console.error(error);
	writeFileSync(join(outDir, `live-${phase}-error.json`), JSON.stringify({ error: String(error) }));
	process.exit(1);
}
