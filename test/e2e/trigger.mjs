/* global fetch, setTimeout */
// Trigger step of the e2e run (run under Node 24 for node:sqlite): registers n8n's production
// webhook URL with the sandbox, sends an inbound message, waits for the delivery and for n8n's
// execution record, and writes <outDir>/trigger.json for check.mjs.
//   node trigger.mjs <outDir> <webhookUrl> <n8nSqlitePath> <workflowId>
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';

const [outDir, url, dbPath, workflowId] = process.argv.slice(2);
const manifest = JSON.parse(readFileSync(join(outDir, 'manifest.json'), 'utf8'));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const post = async (path, body) => {
	const response = await fetch(`${manifest.baseUrl}${path}`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify(body),
	});
	if (!response.ok) throw new Error(`POST ${path}: HTTP ${response.status} ${await response.text()}`);
	return response.json();
};
const result = { url, text: `e2e inbound ${Date.now()}` };
const save = () => writeFileSync(join(outDir, 'trigger.json'), JSON.stringify(result, null, 2));

try {
	// n8n can answer 404 for a moment after activation: wait until the webhook is registered.
	// An empty body is refused by the node with 400 and starts no execution.
	let probe = 0;
	for (let i = 0; i < 60; i++) {
		probe = (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }).catch(() => ({ status: 0 }))).status;
		if (probe !== 404 && probe !== 0) break;
		await sleep(500);
	}
	result.probeStatus = probe;

	await post('/__sandbox/webhooks', { business: manifest.business, url, method: 'POST' });
	await post('/__sandbox/inbound', { business: manifest.business, from: '+49 151 1234 0002', text: result.text });

	for (let i = 0; i < 60 && !result.delivery; i++) {
		const deliveries = await (await fetch(`${manifest.baseUrl}/__sandbox/webhooks/deliveries?business=${manifest.business}`)).json();
		result.deliveries = deliveries;
		result.delivery = deliveries.find((d) => d.url === url && (d.statusCode !== undefined || d.error !== undefined));
		if (!result.delivery) await sleep(250);
	}

	// The execution is saved after the webhook answered (responseMode onReceived): poll for it.
	for (let i = 0; i < 80 && !result.execution; i++) {
		try {
			const db = new DatabaseSync(dbPath, { readOnly: true });
			try {
				const rows = db
					.prepare(
						`SELECT e.id, e.status, e.mode, d.data FROM execution_entity e LEFT JOIN execution_data d ON d.executionId = e.id
						 WHERE e.workflowId = ? ORDER BY e.id`,
					)
					.all(workflowId);
				result.executions = rows.map((r) => ({ id: r.id, status: r.status, mode: r.mode }));
				const done = rows.filter((r) => r.status !== 'running' && r.status !== 'new');
				if (done.length > 0) result.execution = { ...done.at(-1), count: rows.length };
			} finally {
				db.close();
			}
		} catch (error) {
			result.dbError = String(error);
		}
		if (!result.execution) await sleep(250);
	}
	if (result.execution && result.execution.count !== 1) result.note = `${result.execution.count} executions of the trigger workflow`;
} catch (error) {
	result.error = String(error);
	console.error(error);
}
if (result.execution) result.execution.data = String(result.execution.data ?? '').slice(0, 20000);
delete result.deliveries?.body;
save();
