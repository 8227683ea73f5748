/* global fetch */
// Prepares what n8n imports for the e2e run: credentials for the running sandbox, runner and stub
// model, and every examples/*.json rewritten for a real n8n (scripts/dev/n8n-setup.mjs, shared
// with `npm run dev`). Also puts the sandbox in a known "before" state.
//
//   E2E_RUNNER_TOKEN=... node test/e2e/prepare.mjs <sandboxBaseUrl> <outDir> <runnerUrl> <stubUrl>
// Writes <outDir>/credentials.json, <outDir>/workflows/<file>.json and <outDir>/manifest.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import {
	exampleFiles,
	localCredentials,
	n8nNodeTypes,
	prepareExample,
	TYPE_PREFIX,
} from '../../scripts/dev/n8n-setup.mjs';

const [baseUrl, outDir, runnerUrl, stubUrl] = process.argv.slice(2);
if (!baseUrl || !outDir || !runnerUrl || !stubUrl || !process.env.E2E_RUNNER_TOKEN) {
	console.error('usage: E2E_RUNNER_TOKEN=... prepare.mjs <sandboxBaseUrl> <outDir> <runnerUrl> <stubUrl>');
	process.exit(2);
}

/**
 * How each example runs here: `execute` with `n8n execute` before n8n serves anything; `publish`
 * as a published workflow under `n8n start` (its trigger called for real); `live` with
 * `n8n execute` while `n8n start` serves the published ones (its effect starts one of them).
 */
const MODES = {
	'reply-to-inbound-message.json': 'publish',
	'campaign-finished-summary.json': 'publish',
	'campaign-delivery-settled-followup.json': 'publish',
	'campaign-from-customer-list.json': 'live',
};

/** What Ada wrote before the run: the AI agent example must find it through its Convo tool. */
const ADA_INBOUND = 'My espresso order A-100 has not arrived yet, can you check?';

const fixture = await (await fetch(`${baseUrl}/__sandbox/fixture`)).json();
const business = fixture.businesses[0];
const credentials = localCredentials(
	{ fixture, runner: { url: runnerUrl, token: process.env.E2E_RUNNER_TOKEN }, model: { url: stubUrl } },
	'e2e',
);

mkdirSync(join(outDir, 'workflows'), { recursive: true });
const manifest = {
	baseUrl: fixture.baseUrl,
	externalUrl: fixture.externalUrl,
	business: business.id,
	apiKey: business.apiKey,
	runnerUrl,
	stubUrl,
	adaInbound: ADA_INBOUND,
	/** The pack's node types in n8n: the installed community package's name, then the node's. */
	packTypePrefix: TYPE_PREFIX,
	workflows: [],
};
for (const file of exampleFiles()) {
	// The pack is installed as a community package here (run.sh): the examples keep its node types.
	const workflow = prepareExample(file, credentials, { feedUrl: `${stubUrl}/feeds/products.ndjson`, installed: true });
	const out = join(outDir, 'workflows', file);
	writeFileSync(out, JSON.stringify(workflow, null, 2));
	manifest.workflows.push({
		file,
		id: workflow.id,
		name: workflow.name,
		path: out,
		mode: MODES[file] ?? 'execute',
		n8nNodeTypes: n8nNodeTypes(workflow),
		nodes: workflow.nodes.map((n) => ({ name: n.name, type: n.type, webhookId: n.webhookId })),
	});
}

writeFileSync(join(outDir, 'credentials.json'), JSON.stringify(credentials, null, 2));
writeFileSync(join(outDir, 'manifest.json'), JSON.stringify(manifest, null, 2));

// Known "before" state: Ada's tags are set to something the tag example must replace (not extend),
// and Ada wrote ADA_INBOUND.
const ada = business.contacts.find((c) => c.name === 'Ada Lovelace');
const patched = await fetch(`${fixture.externalUrl}/contacts/${ada.uuid}`, {
	method: 'PATCH',
	headers: { 'content-type': 'application/json', 'x-api-key': business.apiKey },
	body: JSON.stringify({ tags: ['e2e-stale'] }),
});
if (!patched.ok) throw new Error(`could not seed Ada's tags: HTTP ${patched.status} ${await patched.text()}`);
// The sandbox has no webhook registered yet, so this inbound message starts nothing.
const inbound = await fetch(`${baseUrl}/__sandbox/inbound`, {
	method: 'POST',
	headers: { 'content-type': 'application/json' },
	body: JSON.stringify({ business: business.id, from: ada.phoneNumber, text: ADA_INBOUND }),
});
if (!inbound.ok)
	throw new Error(`could not seed Ada's inbound message: HTTP ${inbound.status} ${await inbound.text()}`);

// Self-test of the suite: E2E_SANDBOX_FAULTS='{"endpoint":"POST /api/external/v2/send-template","errorRate":1,"errorStatus":500}'
// makes the sandbox fail on purpose, and the run must then report failures.
if (process.env.E2E_SANDBOX_FAULTS) {
	const fault = await fetch(`${baseUrl}/__sandbox/faults`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: process.env.E2E_SANDBOX_FAULTS,
	});
	if (!fault.ok) throw new Error(`could not set sandbox faults: HTTP ${fault.status} ${await fault.text()}`);
	console.log(`sandbox faults set: ${process.env.E2E_SANDBOX_FAULTS}`);
}
console.log(`prepared ${manifest.workflows.length} workflow(s) and ${credentials.length} credential(s) in ${outDir}`);
