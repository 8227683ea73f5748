/* global fetch */
// Prepares what n8n imports for the e2e run: credentials pointing at the running sandbox, and
// every examples/*.json rewritten for a real n8n (custom-extension node types, credential ids of
// the imported credentials). Also puts the sandbox in a known "before" state.
//
//   node test/e2e/prepare.mjs <sandboxBaseUrl> <outDir>
// Writes <outDir>/credentials.json, <outDir>/workflows/<file>.json and <outDir>/manifest.json.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [baseUrl, outDir] = process.argv.slice(2);
if (!baseUrl || !outDir) {
	console.error('usage: prepare.mjs <sandboxBaseUrl> <outDir>');
	process.exit(2);
}
const examplesDir = new URL('../../examples/', import.meta.url).pathname;

const fixture = await (await fetch(`${baseUrl}/__sandbox/fixture`)).json();
const business = fixture.businesses[0];

// n8n ids are 16-character strings; the names are what the UI shows.
const credentials = [
	{
		id: 'e2eConvoApi00001',
		name: 'Convo sandbox (e2e, messaging API)',
		type: 'convoApi',
		data: { baseUrl: fixture.baseUrl, accessToken: business.accessToken },
	},
	{
		id: 'e2eConvoExtApi01',
		name: 'Convo sandbox (e2e, external API)',
		type: 'convoExternalApi',
		data: { externalUrl: fixture.externalUrl, apiKey: business.apiKey },
	},
];
const byType = Object.fromEntries(credentials.map((c) => [c.type, { id: c.id, name: c.name }]));

const TYPE_MAP = {
	'n8n-nodes-convo.convo': 'CUSTOM.convo',
	'n8n-nodes-convo.convoTrigger': 'CUSTOM.convoTrigger',
};

mkdirSync(join(outDir, 'workflows'), { recursive: true });
const manifest = { baseUrl: fixture.baseUrl, externalUrl: fixture.externalUrl, business: business.id, apiKey: business.apiKey, workflows: [] };
for (const file of readdirSync(examplesDir).filter((f) => f.endsWith('.json')).sort()) {
	const workflow = JSON.parse(readFileSync(join(examplesDir, file), 'utf8'));
	if (typeof workflow.id !== 'string' || workflow.id.length !== 16) {
		throw new Error(`examples/${file}: n8n import needs a 16-character "id", got ${JSON.stringify(workflow.id)}`);
	}
	for (const node of workflow.nodes) {
		if (TYPE_MAP[node.type]) node.type = TYPE_MAP[node.type];
		for (const type of Object.keys(node.credentials ?? {})) {
			if (!byType[type]) throw new Error(`examples/${file}: node "${node.name}" uses credential type ${type}, which the e2e run does not provide`);
			node.credentials[type] = byType[type];
		}
	}
	const leftovers = workflow.nodes.filter((n) => n.type.startsWith('n8n-nodes-convo.'));
	if (leftovers.length) throw new Error(`examples/${file}: unmapped node types ${leftovers.map((n) => n.type).join(', ')}`);
	workflow.active = false;
	const out = join(outDir, 'workflows', file);
	writeFileSync(out, JSON.stringify(workflow, null, 2));
	manifest.workflows.push({ file, id: workflow.id, name: workflow.name, path: out, nodes: workflow.nodes.map((n) => ({ name: n.name, type: n.type })) });
}

writeFileSync(join(outDir, 'credentials.json'), JSON.stringify(credentials, null, 2));
writeFileSync(join(outDir, 'manifest.json'), JSON.stringify(manifest, null, 2));

// Known "before" state: Ada's tags are set to something the tag example must replace (not extend).
const ada = business.contacts.find((c) => c.name === 'Ada Lovelace');
const patched = await fetch(`${fixture.externalUrl}/contacts/${ada.uuid}`, {
	method: 'PATCH',
	headers: { 'content-type': 'application/json', 'x-api-key': business.apiKey },
	body: JSON.stringify({ tags: ['e2e-stale'] }),
});
if (!patched.ok) throw new Error(`could not seed Ada's tags: HTTP ${patched.status} ${await patched.text()}`);
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
