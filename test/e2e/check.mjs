/* global fetch */
// Checks the e2e run: every example executed successfully in the real n8n, and the sandbox
// recorded what each one was meant to do. Prints one line per check and a closing
// "e2e: N passed, M failed"; exits non-zero when anything failed.
//
//   node test/e2e/check.mjs <outDir>
// Reads <outDir>/manifest.json, <outDir>/exec/<workflowId>.{out,rc} and optionally
// <outDir>/trigger.json (written by the trigger step of run.sh).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const outDir = process.argv[2];
const manifest = JSON.parse(readFileSync(join(outDir, 'manifest.json'), 'utf8'));
const results = [];
const check = async (name, fn) => {
	try {
		await fn();
		results.push({ name, ok: true });
		console.log(`  ok   ${name}`);
	} catch (error) {
		results.push({ name, ok: false });
		console.log(`  FAIL ${name}: ${error instanceof Error ? error.message : String(error)}`);
	}
};
const assert = (cond, message) => {
	if (!cond) throw new Error(message);
};
const sandboxGet = async (path, headers = {}) => {
	const response = await fetch(`${manifest.baseUrl}${path}`, { headers });
	const body = await response.json().catch(() => undefined);
	if (!response.ok) throw new Error(`GET ${path}: HTTP ${response.status} ${JSON.stringify(body)}`);
	return body;
};

/** `n8n execute --rawOutput` prints the run as pretty JSON, with log lines before (and on failure after) it. */
function parseRun(text) {
	const lines = text.split('\n');
	const starts = lines.flatMap((line, i) => (line === '{' ? [i] : []));
	const ends = lines.flatMap((line, i) => (line === '}' ? [i] : [])).reverse();
	for (const start of starts) {
		for (const end of ends.filter((e) => e > start)) {
			try {
				return JSON.parse(lines.slice(start, end + 1).join('\n'));
			} catch {
				// not a complete JSON document; try the next candidate
			}
		}
	}
	throw new Error(`no JSON run data in the output (${text.length} chars): ${text.slice(0, 300)}`);
}

const ADA_PHONE = '4915112340001';
// What each example must leave behind in the sandbox, by file name.
const effects = {
	'send-order-update-template.json': async () => {
		const messages = await sandboxGet(`/__sandbox/messages?business=${manifest.business}`);
		const sent = messages.filter((m) => m.source === 'template' && m.to === ADA_PHONE);
		assert(sent.length === 1, `expected 1 template message to ${ADA_PHONE}, the sandbox has ${sent.length} (${JSON.stringify(messages).slice(0, 300)})`);
		const text = JSON.stringify(sent[0]);
		assert(text.includes('order_update') || text.includes('3f4bc6d6-5048-4a60-85ba-1afccb00f004'), `message is not the order_update template: ${text.slice(0, 300)}`);
		assert(text.includes('Ada') && text.includes('A-100'), `template variables Ada / A-100 not in the message: ${text.slice(0, 300)}`);
	},
	'tag-contact-and-read-conversation.json': async () => {
		const found = await sandboxGet(`/api/external/v2/conversations?phone=${ADA_PHONE}`, { 'x-api-key': manifest.apiKey });
		const tags = found.conversation.tags;
		assert(JSON.stringify(tags) === JSON.stringify(['vip', 'gold']), `tags should be replaced by ["vip","gold"] (seeded ["e2e-stale"]), are ${JSON.stringify(tags)}`);
	},
};

for (const wf of manifest.workflows) {
	const label = `${wf.file} (${wf.id})`;
	const outFile = join(outDir, 'exec', `${wf.id}.out`);
	const rc = Number(readFileSync(join(outDir, 'exec', `${wf.id}.rc`), 'utf8').trim());
	await check(`${label}: n8n execute succeeded`, async () => {
		const text = readFileSync(outFile, 'utf8');
		if (rc !== 0) {
			let reason = text.slice(-400);
			try {
				const error = parseRun(text).data?.resultData?.error;
				if (error) reason = `${error.message}${error.description ? ` (${error.description})` : ''}${error.node?.name ? ` in node "${error.node.name}"` : ''}`;
			} catch {
				// no run data printed: keep the output's tail
			}
			throw new Error(`n8n execute exited ${rc}: ${reason}`);
		}
		const run = parseRun(text);
		const resultData = run.data?.resultData ?? run.resultData;
		assert(resultData, `no resultData in the run: ${JSON.stringify(run).slice(0, 300)}`);
		assert(!resultData.error, `workflow error: ${resultData.error?.message} ${resultData.error?.description ?? ''}`);
		for (const node of wf.nodes.filter((n) => n.type.startsWith('CUSTOM.'))) {
			const runs = resultData.runData?.[node.name];
			assert(runs?.length, `node "${node.name}" did not run`);
			const last = runs.at(-1);
			assert(!last.error, `node "${node.name}" failed: ${last.error?.message}`);
			const items = last.data?.main?.[0] ?? [];
			assert(items.length > 0, `node "${node.name}" returned no items`);
			assert(!items.some((item) => item.json?.error), `node "${node.name}" returned an error item: ${JSON.stringify(items).slice(0, 300)}`);
		}
	});
	const effect = effects[wf.file];
	if (effect) await check(`${label}: sandbox recorded the effect`, effect);
	else console.log(`  note ${label}: no sandbox effect check defined for this example`);
}

const triggerFile = join(outDir, 'trigger.json');
if (existsSync(triggerFile)) {
	const trigger = JSON.parse(readFileSync(triggerFile, 'utf8'));
	await check('trigger: sandbox delivered message_created to n8n with 200', async () => {
		assert(trigger.delivery, `no delivery to ${trigger.url}: ${String(JSON.stringify(trigger.deliveries ?? trigger.error)).slice(0, 400)}`);
		assert(trigger.delivery.status === 200 || trigger.delivery.statusCode === 200, `delivery answered ${JSON.stringify(trigger.delivery)}`);
	});
	await check('trigger: n8n recorded a successful execution carrying the inbound text', async () => {
		assert(trigger.execution, `no execution found: ${String(JSON.stringify(trigger.executions ?? trigger.dbError ?? trigger.error)).slice(0, 400)}`);
		assert(trigger.execution.status === 'success', `execution status ${trigger.execution.status}`);
		assert(trigger.execution.count === 1, `expected exactly 1 execution, n8n has ${trigger.execution.count}: ${JSON.stringify(trigger.executions)}`);
		assert(JSON.stringify(trigger.execution.data ?? {}).includes(trigger.text), `execution data does not contain "${trigger.text}"`);
	});
}

const passed = results.filter((r) => r.ok).length;
const failed = results.length - passed;
console.log(`e2e: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
