/**
 * Child process of benchmark 2: one workflow, a start node with N recipients and the Convo node's
 * Template → Send, executed by n8n-core (test/harness/workflow.ts) as a manual execution is. A
 * process of its own, so its peak RSS is the workflow's alone. Prints one JSON line.
 *
 * Its settings come in BENCH_WORKFLOW (JSON; the credentials too, so no secret is on a command line),
 * the recipients in the benchmark's CSV file.
 */
import { readFileSync } from 'node:fs';

import { convoNode, itemsThen, runWorkflow } from '../../test/harness/workflow';

interface Settings {
	baseUrl: string;
	externalUrl: string;
	apiKey: string;
	accessToken: string;
	templateId: string;
	from: string;
	/** The benchmark's recipients CSV (`phone,1,2`, a header line): too many to pass in the environment. */
	recipientsCsv: string;
	requestsAtOnce: number;
}

async function main(): Promise<void> {
	const settings = JSON.parse(process.env.BENCH_WORKFLOW ?? '{}') as Settings;
	const rows = readFileSync(settings.recipientsCsv, 'utf8').trim().split('\n').slice(1);
	const items = rows.map((row) => {
		const [phone, first, second] = row.split(',');
		return { phone, 1: first, 2: second };
	});
	const node = convoNode({
		resource: 'template',
		operation: 'send',
		templateId: settings.templateId,
		fromPhoneNumber: `+${settings.from}`,
		phone: '={{ $json.phone }}',
		variables: {
			variable: [
				{ name: '1', value: '={{ $json["1"] }}' },
				{ name: '2', value: '={{ $json["2"] }}' },
			],
		},
		batching: { requestsAtOnce: settings.requestsAtOnce },
	});
	const started = performance.now();
	const result = await runWorkflow(itemsThen(items, node), {
		credentials: {
			convoApi: { baseUrl: settings.baseUrl, accessToken: settings.accessToken },
			convoExternalApi: { externalUrl: settings.externalUrl, apiKey: settings.apiKey },
		},
	});
	const seconds = (performance.now() - started) / 1000;
	const output = result.outputOf('Convo');
	console.log(
		JSON.stringify({
			items: items.length,
			withMessageId: output.filter((item) => typeof item.json.messageId === 'string').length,
			error: result.errorOf('Convo')?.message,
			seconds,
			maxRssMb: process.resourceUsage().maxRSS / 1024,
		}),
	);
}

main().catch((error: unknown) => {
	console.error(error instanceof Error ? error.message : 'the workflow failed');
	process.exit(1);
});
