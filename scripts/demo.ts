/**
 * The quick start's main job: starts the sandbox, runs the workflows in examples/ that n8n-core
 * (the same engine n8n runs) can run with the sandbox alone, and shows in full what each Convo
 * node returned and what the service recorded. The reply example's Convo Trigger is served over
 * HTTP and the sandbox delivers it an inbound message. Examples that need the runner or n8n's own
 * nodes (AI Agent, Code, Schedule Trigger, Summarize) are named with where they run: `npm run dev`
 * and the end-to-end suite. Nothing leaves this machine.
 *
 *   npm run demo                   # sandbox on a free port
 *   SANDBOX_PORT=4010 npm run demo # on a fixed port
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { startSandbox } from '../sandbox/src';
import { serveTrigger } from '../test/harness/webhook';
import { nodeTypes, runWorkflow, type RunResult, type WorkflowJson } from '../test/harness/workflow';

const examplesDir = join(__dirname, '..', 'examples');

const LINE_WIDTH = 100;

/** Why the demo does not run an example here, or undefined when it does. */
function notRunHere(workflow: WorkflowJson): string | undefined {
	if (workflow.nodes.some((node) => Object.keys(node.credentials ?? {}).includes('convoRunnerApi'))) {
		return 'needs the runner: `npm run dev` runs it in n8n, `npm test` through n8n-core against a runner';
	}
	const unknown = workflow.nodes.filter((node) => {
		try {
			nodeTypes.getByName(node.type);
			return false;
		} catch {
			return true;
		}
	});
	if (unknown.length > 0)
		return `needs n8n itself for ${unknown.map((node) => `"${node.name}"`).join(', ')}: \`npm run dev\` runs it in n8n`;
	return undefined;
}

/**
 * JSON in full, indented, with every object or array that fits on one line kept on one line:
 * a contact's tags or one conversation message reads at a glance, nothing is cut.
 */
function readableJson(value: unknown, indent = ''): string {
	const compact = JSON.stringify(value);
	if (value === null || typeof value !== 'object' || indent.length + compact.length <= LINE_WIDTH) return compact;
	const inner = `${indent}  `;
	const entries = Array.isArray(value)
		? value.map((element) => `${inner}${readableJson(element, inner)}`)
		: Object.entries(value).map(([key, element]) => `${inner}${JSON.stringify(key)}: ${readableJson(element, inner)}`);
	const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
	return entries.length === 0 ? `${open}${close}` : `${open}\n${entries.join(',\n')}\n${indent}${close}`;
}

async function main(): Promise<void> {
	const sandbox = await startSandbox({ port: Number(process.env.SANDBOX_PORT ?? 0) });
	const business = sandbox.fixture.businesses[0];
	console.log(`sandbox: ${sandbox.baseUrl} (external API ${sandbox.externalUrl}), business "${business.name}"\n`);
	const credentials = {
		convoApi: { baseUrl: sandbox.baseUrl, accessToken: business.accessToken },
		convoExternalApi: { externalUrl: sandbox.externalUrl, apiKey: business.apiKey },
	};

	let failures = 0;
	try {
		for (const file of readdirSync(examplesDir)
			.filter((name) => name.endsWith('.json'))
			.sort()) {
			const workflow = JSON.parse(readFileSync(join(examplesDir, file), 'utf8')) as WorkflowJson;
			console.log(`▶ ${workflow.name ?? file} (examples/${file})`);
			const reason = notRunHere(workflow);
			if (reason) {
				console.log(`  – not run here: ${reason}\n`);
				continue;
			}
			let result: RunResult;
			if (workflow.nodes.some((node) => node.type === 'n8n-nodes-convo.convoTrigger')) {
				// The trigger served over HTTP, registered with the sandbox, which delivers an inbound message.
				const served = await serveTrigger({ workflow, credentials });
				try {
					await fetch(`${sandbox.baseUrl}/__sandbox/webhooks`, {
						method: 'POST',
						headers: { 'content-type': 'application/json' },
						body: JSON.stringify({ business: business.id, url: served.url, method: served.method }),
					});
					const text = 'Hello, where is my order A-100?';
					console.log(`  (the sandbox delivers an inbound message from Ada: "${text}")`);
					await fetch(`${sandbox.baseUrl}/__sandbox/inbound`, {
						method: 'POST',
						headers: { 'content-type': 'application/json' },
						body: JSON.stringify({ business: business.id, from: '+4915112340001', text }),
					});
					const [execution] = await served.waitForExecutions(1, 15_000);
					const runData = execution.run.data.resultData.runData;
					result = {
						run: execution.run,
						outputOf: (name) => runData[name]?.[0]?.data?.main?.[0] ?? [],
						errorOf: (name) => runData[name]?.[0]?.error,
					};
				} finally {
					await served.close();
				}
			} else {
				result = await runWorkflow(workflow, { credentials });
			}
			for (const node of workflow.nodes.filter((n) => n.type === 'n8n-nodes-convo.convo')) {
				const error = result.errorOf(node.name);
				if (error) {
					failures++;
					console.log(`  ✗ ${node.name}: ${error.message}`);
					continue;
				}
				for (const item of result.outputOf(node.name))
					console.log(`  ✓ ${node.name}: ${readableJson(item.json, '    ')}`);
			}
			console.log('');
		}
		const response = await fetch(`${sandbox.baseUrl}/__sandbox/messages?business=${business.id}`);
		const messages = (await response.json()) as Array<{ to: string; text: string }>;
		console.log(`the service accepted ${messages.length} message(s):`);
		for (const message of messages) console.log(`  to ${message.to}: ${message.text}`);
	} finally {
		await sandbox.close();
	}
	if (failures > 0) {
		console.error(`\n${failures} node(s) failed`);
		process.exitCode = 1;
	}
}

main().catch((error: unknown) => {
	console.error(`demo failed: ${error instanceof Error ? error.message : String(error)}`);
	process.exitCode = 1;
});
