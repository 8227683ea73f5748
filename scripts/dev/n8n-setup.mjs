// What a real n8n imports to run examples/ against local services, shared by `npm run dev` and
// the end-to-end suite: one credential per type the examples use, and each example rewritten for
// the local services (the imported credentials' ids, the local product feed) and, for a pack
// loaded through N8N_CUSTOM_EXTENSIONS (`npm run dev`), its node types `CUSTOM.*`. The examples
// themselves stay as a user imports them, with the installed package's types `n8n-nodes-convo.*`.
/* global fetch, AbortSignal */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const EXAMPLES_DIR = new URL('../../examples/', import.meta.url).pathname;

/** n8n names a custom extension's nodes CUSTOM.<name>; an installed package keeps its own name. */
export const TYPE_PREFIX = 'n8n-nodes-convo.';
export const CUSTOM_PREFIX = 'CUSTOM.';

/** The example feed's address, replaced by the one served locally. */
export const EXAMPLE_FEED_URL = 'https://shop.example.com/feeds/products.ndjson';

/** Example files in a stable order. */
export function exampleFiles() {
	return readdirSync(EXAMPLES_DIR)
		.filter((file) => file.endsWith('.json'))
		.sort();
}

export function readExample(file) {
	return JSON.parse(readFileSync(join(EXAMPLES_DIR, file), 'utf8'));
}

/**
 * Credentials for the local services, in `n8n import:credentials` form (plain `data`; n8n
 * encrypts it on import). Ids are 16 characters, fixed, so a second import updates them.
 *   services: { fixture (the sandbox's /__sandbox/fixture), runner?: { url, token }, model?: { url } }
 */
export function localCredentials({ fixture, runner, model }, label = 'local') {
	const business = fixture.businesses[0];
	const credentials = [
		{
			id: 'cvDevConvoApi001',
			name: `Convo sandbox (${label}, messaging API)`,
			type: 'convoApi',
			data: { baseUrl: fixture.baseUrl, accessToken: business.accessToken },
		},
		{
			id: 'cvDevConvoExt001',
			name: `Convo sandbox (${label}, external API)`,
			type: 'convoExternalApi',
			data: { externalUrl: fixture.externalUrl, apiKey: business.apiKey },
		},
		{
			id: 'cvDevConvoHook01',
			name: `Convo webhook header (${label})`,
			type: 'convoTriggerApi',
			data: { headerName: 'X-Convo-Webhook-Secret', secret: `whsec-${label}-${business.id.slice(0, 8)}` },
		},
	];
	if (runner) {
		credentials.push({
			id: 'cvDevRunnerApi01',
			name: `Convo runner (${label})`,
			type: 'convoRunnerApi',
			data: { runnerUrl: runner.url, token: runner.token },
		});
	}
	if (model) {
		credentials.push({
			id: 'cvDevOpenAiStub1',
			name: `OpenAI stub model (${label}, no key needed)`,
			type: 'openAiApi',
			data: { apiKey: 'sk-stub-not-a-real-key', url: `${model.url}/v1` },
		});
	}
	return credentials;
}

/**
 * An example as n8n should import it here: every credential reference pointing at the imported
 * credential of its type, the feed URL replaced, and the pack's node types CUSTOM.* unless
 * `installed` (the pack installed as a community package keeps `n8n-nodes-convo.*`). Throws,
 * naming the file and node, when an example uses a credential type the setup does not provide.
 */
export function prepareExample(file, credentials, { feedUrl, installed = false } = {}) {
	const workflow = readExample(file);
	if (typeof workflow.id !== 'string' || workflow.id.length !== 16) {
		throw new Error(`examples/${file}: n8n import needs a 16-character "id", got ${JSON.stringify(workflow.id)}`);
	}
	const byType = Object.fromEntries(credentials.map((c) => [c.type, { id: c.id, name: c.name }]));
	for (const node of workflow.nodes) {
		if (!installed && node.type.startsWith(TYPE_PREFIX))
			node.type = CUSTOM_PREFIX + node.type.slice(TYPE_PREFIX.length);
		for (const type of Object.keys(node.credentials ?? {})) {
			if (!byType[type])
				throw new Error(
					`examples/${file}: node "${node.name}" uses credential type ${type}, which this setup does not provide`,
				);
			node.credentials[type] = byType[type];
		}
		if (feedUrl) {
			const text = JSON.stringify(node.parameters);
			if (text.includes(EXAMPLE_FEED_URL)) node.parameters = JSON.parse(text.split(EXAMPLE_FEED_URL).join(feedUrl));
		}
	}
	workflow.active = false;
	return workflow;
}

/** The node types an example needs from n8n itself (not from this pack). */
export function n8nNodeTypes(workflow) {
	return [
		...new Set(
			workflow.nodes
				.map((node) => node.type)
				.filter((type) => !type.startsWith(CUSTOM_PREFIX) && !type.startsWith(TYPE_PREFIX)),
		),
	];
}

/**
 * Claims n8n's owner account through its REST API (`POST /rest/owner/setup`), as the setup screen
 * of a new n8n does. Answers 'claimed', or 'already' when an owner exists (n8n answers 400 then);
 * throws on any other answer, with n8n's (never the password).
 *   owner: { email, password, firstName?, lastName? } (n8n wants 8+ characters, a digit, a capital)
 */
export async function claimOwner(editorUrl, { email, password, firstName = 'Convo', lastName = 'Owner' }) {
	const response = await fetch(`${editorUrl}/rest/owner/setup`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ email, firstName, lastName, password }),
		signal: AbortSignal.timeout(30_000),
	});
	if (response.ok) return 'claimed';
	const text = await response.text();
	if (response.status === 400 && /already/i.test(text)) return 'already';
	throw new Error(`could not create n8n's owner account (HTTP ${response.status}): ${text.slice(0, 300)}`);
}
