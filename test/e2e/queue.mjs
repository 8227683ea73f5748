/* global fetch, setTimeout, AbortSignal */
// The queue-mode phase's requests to n8n's main process (under Node 24), in phases called by queue.sh:
//   execute <outDir> <mainUrl> <id>...   claims the owner account (first call), signs in, and runs each
//                                        workflow as the editor's Run button does (POST
//                                        /rest/workflows/<id>/run from its manual trigger); with
//                                        OFFLOAD_MANUAL_EXECUTIONS_TO_WORKERS=true main enqueues it and
//                                        a worker runs it. Waits for each execution to finish and
//                                        writes exec/<id>.json (its id, status and run data) and the
//                                        sandbox's request counts before and after, as run.sh does
//                                        for `n8n execute`.
//   publish <outDir> <mainUrl> <id>...   publishes each workflow as the editor's Publish button does
//                                        (POST /rest/workflows/<id>/activate with its current version):
//                                        main, the leader, activates it and its triggers register
//                                        themselves (at WEBHOOK_URL, the webhook processor): published.json
//   main-webhooks <outDir> <mainUrl>     calls the reply example's production URL on main itself:
//                                        production webhooks are off there (the webhook processor
//                                        serves them): main-webhooks.json
// Env: E2E_N8N_DIR (n8n's install, for `flatted`).
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

import { claimOwner } from '../../scripts/dev/n8n-setup.mjs';

const [phase, outDir, mainUrl, ...ids] = process.argv.slice(2);
const manifest = JSON.parse(readFileSync(join(outDir, 'manifest.json'), 'utf8'));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const BROWSER_ID = 'e2e-queue-mode';
const OWNER = {
	email: 'queue@convo-for-n8n.dev',
	firstName: 'Queue',
	lastName: 'Owner',
};

/** n8n keeps run data as `flatted` JSON; its own copy of the package reads it. */
function parseFlatted(text) {
	const require = createRequire(join(process.env.E2E_N8N_DIR, 'package.json'));
	return require('flatted').parse(text);
}

async function rest(method, path, { cookie, body } = {}) {
	const response = await fetch(`${mainUrl}${path}`, {
		method,
		headers: {
			...(cookie ? { cookie } : {}),
			...(body ? { 'content-type': 'application/json' } : {}),
			'browser-id': BROWSER_ID,
		},
		body: body ? JSON.stringify(body) : undefined,
		signal: AbortSignal.timeout(30_000),
	});
	const text = await response.text();
	if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status} ${text.slice(0, 300)}`);
	return {
		json: JSON.parse(text),
		cookie: response.headers
			.getSetCookie()
			.map((c) => c.split(';')[0])
			.join('; '),
	};
}

/** The owner account: claimed on the first call, its password kept in the work folder for the next. */
async function signIn() {
	const passwordFile = join(outDir, 'owner-password');
	let password;
	try {
		password = readFileSync(passwordFile, 'utf8');
	} catch {
		password = `Q${randomBytes(12).toString('hex')}9`;
		writeFileSync(passwordFile, password, { mode: 0o600 });
		await claimOwner(mainUrl, { ...OWNER, password });
	}
	const { cookie } = await rest('POST', '/rest/login', {
		body: { emailOrLdapLoginId: OWNER.email, password },
	});
	return cookie;
}

async function sandboxCounts() {
	return await (await fetch(`${manifest.baseUrl}/__sandbox/requests`)).text();
}

async function execute() {
	const cookie = await signIn();
	for (const id of ids) {
		const wf = manifest.workflows.find((w) => w.id === id);
		const trigger = wf.nodes.find((node) => node.type === 'n8n-nodes-base.manualTrigger');
		const started = Date.now();
		const record = { workflowId: id, file: wf.file };
		writeFileSync(join(outDir, 'exec', `${id}.requests-before.json`), await sandboxCounts());
		try {
			if (!trigger) throw new Error(`${wf.file} has no manual trigger`);
			const { json } = await rest('POST', `/rest/workflows/${id}/run`, {
				cookie,
				body: { triggerToStartFrom: { name: trigger.name } },
			});
			record.executionId = json.data?.executionId;
			if (!record.executionId) throw new Error(`n8n started no execution: ${JSON.stringify(json).slice(0, 300)}`);
			// The worker writes the result to the database; main's REST API reads it from there.
			for (let i = 0; i < 480; i++) {
				const { json: execution } = await rest('GET', `/rest/executions/${record.executionId}`, { cookie });
				const { status, finished, mode } = execution.data ?? {};
				Object.assign(record, { status, finished, mode });
				if (status && !['new', 'running', 'waiting'].includes(status)) {
					record.run = parseFlatted(execution.data.data);
					break;
				}
				await sleep(250);
			}
			if (!record.run)
				record.error = `execution ${record.executionId} did not finish within 120 s (status ${record.status})`;
		} catch (error) {
			record.error = String(error);
		}
		writeFileSync(join(outDir, 'exec', `${id}.requests-after.json`), await sandboxCounts());
		writeFileSync(join(outDir, 'exec', `${id}.json`), JSON.stringify(record, null, 2));
		console.error(
			`[queue.mjs] ${wf.file}: execution ${record.executionId ?? '-'} ${record.status ?? record.error} in ${Date.now() - started} ms`,
		);
	}
}

async function publish() {
	const cookie = await signIn();
	const published = {};
	for (const id of ids) {
		const { json: workflow } = await rest('GET', `/rest/workflows/${id}`, {
			cookie,
		});
		const { json: activated } = await rest('POST', `/rest/workflows/${id}/activate`, {
			cookie,
			body: { versionId: workflow.data.versionId },
		});
		published[id] = {
			versionId: workflow.data.versionId,
			activeVersionId: activated.data?.activeVersionId ?? null,
		};
		if (published[id].activeVersionId !== workflow.data.versionId)
			throw new Error(`${id} was not published: ${JSON.stringify(activated).slice(0, 300)}`);
	}
	writeFileSync(join(outDir, 'published.json'), JSON.stringify(published, null, 2));
}

async function mainWebhooks() {
	const wf = manifest.workflows.find((w) => w.file === 'reply-to-inbound-message.json');
	const trigger = wf.nodes.find((node) => node.type === `${manifest.packTypePrefix}convoTrigger`);
	const url = `${mainUrl}/webhook/${trigger.webhookId}/convo`;
	const response = await fetch(url, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: '{}',
		signal: AbortSignal.timeout(30_000),
	});
	writeFileSync(join(outDir, 'main-webhooks.json'), JSON.stringify({ url, status: response.status }, null, 2));
}

const phases = { execute, publish, 'main-webhooks': mainWebhooks };
if (!phases[phase]) {
	console.error(`unknown phase ${phase}; one of ${Object.keys(phases).join(', ')}`);
	process.exit(2);
}
try {
	await phases[phase]();
} catch (error) {
	console.error(error);
	writeFileSync(join(outDir, `queue-${phase}-error.json`), JSON.stringify({ error: String(error) }));
	process.exit(1);
}
