/* global fetch, setTimeout */
// Checks the e2e run: the packed pack is installed as a community package (and nothing else can
// stand in for it); every example ran successfully in the real n8n through it, and left in the sandbox or
// the runner what it was meant to; the live step (published triggers under `n8n start`) and the
// `npm run dev` check did what they should. Then the same for the queue-mode phase (queue.sh): the
// pack installed on main, the worker and the webhook processor, every example executed by the
// worker (n8n's own logs say so), the published triggers reached through the webhook processor.
// Prints one line per check and a closing "e2e: N passed, M failed"; exits non-zero when anything failed.
//
//   node test/e2e/check.mjs <outDir>
// Reads <outDir>/manifest.json, <outDir>/exec/<workflowId>.{out,rc}, <outDir>/live-*.json and
// <outDir>/dev.json (each written by a step of run.sh; a step that did not run fails its checks),
// and <outDir>/queue/ (manifest.json, exec/<workflowId>.json, live-*.json, logs/n8n-*.log).
// Env: E2E_PACK_DIR (the pack's package folder), E2E_SKIP_LIVE, E2E_SKIP_DEV, E2E_SKIP_QUEUE.
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const outDir = process.argv[2];
const results = [];
const record = async (name, fn) => {
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
const short = (value, length = 300) => String(JSON.stringify(value)).slice(0, length);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function getJson(url, headers = {}) {
	const response = await fetch(url, { headers });
	const body = await response.json().catch(() => undefined);
	if (!response.ok) throw new Error(`GET ${url}: HTTP ${response.status} ${short(body)}`);
	return body;
}

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

const ADA = { uuid: 'e6f0ff4e-d05a-4b3b-8bc7-07926a34b432', digits: '4915112340001' };
const PRODUCTS_COLLECTION = '6dcea3a6-4af1-40ad-844e-4a72ff2233cf';
const FEED_SKUS = ['ACME-DEC-250', 'ACME-ESP-250', 'ACME-FIL-500', 'ACME-GRD-001', 'ACME-MUG-002'];
const CAMPAIGN_PHONES = ['491712000001', '491712000002', '491712000003', '491712000004'];
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The node pack's package folder: its package.json and dist/ are what was packed. */
const PACK_DIR = process.env.E2E_PACK_DIR ?? join(ROOT, 'packages', 'n8n-nodes-convo');
const PACK = JSON.parse(readFileSync(join(PACK_DIR, 'package.json'), 'utf8'));

/**
 * The checks of one run of the examples in n8n: `single` (one `n8n start` process, run.sh) or
 * `queue` (main, worker and webhook processor, queue.sh). Names of the queue run's checks start
 * with "queue mode: ".
 */
async function checkRun(outDir, mode) {
	const queue = mode === 'queue';
	const manifest = JSON.parse(readFileSync(join(outDir, 'manifest.json'), 'utf8'));
	const check = (name, fn) => record(queue ? `queue mode: ${name}` : name, fn);
	const sandboxGet = (path) => getJson(`${manifest.baseUrl}${path}`);
	const externalGet = (path) => getJson(`${manifest.externalUrl}${path}`, { 'x-api-key': manifest.apiKey });
	const runnerGet = (path) =>
		getJson(`${manifest.runnerUrl}${path}`, { authorization: `Bearer ${process.env.E2E_RUNNER_TOKEN}` });
	async function externalPatch(path, body) {
		const response = await fetch(`${manifest.externalUrl}${path}`, {
			method: 'PATCH',
			headers: { 'x-api-key': manifest.apiKey, 'content-type': 'application/json' },
			body: JSON.stringify(body),
		});
		if (!response.ok) throw new Error(`PATCH ${path}: HTTP ${response.status} ${await response.text()}`);
		return await response.json();
	}
	const readJsonFile = (name) =>
		existsSync(join(outDir, name)) ? JSON.parse(readFileSync(join(outDir, name), 'utf8')) : undefined;

	// n8n's own account of who ran an execution in queue mode (its execution record names no process):
	// the process that received it logs "Enqueued execution <id> (job <n>)"; the worker that took the
	// job logs "Worker started execution <id> (job <n>)" and "Worker finished execution ..." with
	// success; the enqueuing process logs "Execution <id> (job <n>) finished" with that worker's
	// workerId (its hostId, "worker-..."). JSON log lines (N8N_LOG_FORMAT=json).
	const ROLES = { main: 'main', worker: 'the worker', webhook: 'the webhook processor' };
	const logs = {};
	if (queue) {
		for (const role of Object.keys(ROLES)) {
			const file = join(outDir, 'logs', `n8n-${role}.log`);
			logs[role] = (existsSync(file) ? readFileSync(file, 'utf8') : '').split('\n').flatMap((line) => {
				try {
					const entry = JSON.parse(line);
					return typeof entry.message === 'string'
						? [{ message: entry.message.trim(), metadata: entry.metadata ?? {} }]
						: [];
				} catch {
					return [];
				}
			});
		}
	}
	function ranOnTheWorker(executionId, enqueuer) {
		assert(executionId, 'no execution id');
		const enqueued = logs[enqueuer].find((e) => e.message.startsWith(`Enqueued execution ${executionId} (job `));
		assert(enqueued, `${ROLES[enqueuer]}'s log has no "Enqueued execution ${executionId}"`);
		const job = /\(job (\S+)\)/.exec(enqueued.message)[1];
		const on = (role, message) => logs[role].find((e) => e.message === message);
		assert(
			on('worker', `Worker started execution ${executionId} (job ${job})`),
			`the worker's log has no "Worker started execution ${executionId} (job ${job})"`,
		);
		const finished = on('worker', `Worker finished execution ${executionId} (job ${job})`);
		assert(
			finished?.metadata.success === true,
			`the worker's log has no successful "Worker finished execution ${executionId} (job ${job})": ${short(finished)}`,
		);
		const reported = on(enqueuer, `Execution ${executionId} (job ${job}) finished`);
		assert(
			/^worker-/.test(reported?.metadata.workerId ?? ''),
			`${ROLES[enqueuer]} did not log the job finished by a worker: ${short(reported)}`,
		);
		for (const role of ['main', 'webhook']) {
			assert(
				!logs[role].some((e) => e.message.startsWith(`Worker started execution ${executionId} `)),
				`${ROLES[role]} ran execution ${executionId}`,
			);
		}
	}

	/** The run data `n8n execute` printed for an example; undefined when it did not execute. */
	const runs = {};
	function outputOf(file, nodeName) {
		const runData = runs[file]?.runData?.[nodeName];
		return (runData?.at(-1)?.data?.main?.[0] ?? []).map((item) => item.json);
	}

	/** How many requests of `endpoint` the sandbox got while `n8n execute` ran the example. */
	function requestsDuring(file, endpoint) {
		const id = manifest.workflows.find((w) => w.file === file).id;
		const counts = (name) =>
			JSON.parse(readFileSync(join(outDir, 'exec', `${id}.requests-${name}.json`), 'utf8')).counts[endpoint] ?? 0;
		return counts('after') - counts('before');
	}

	// What each example must leave behind in the sandbox or the runner, by file name.
	const effects = {
		'send-order-update-template.json': async () => {
			const messages = await sandboxGet(`/__sandbox/messages?business=${manifest.business}`);
			const sent = messages.filter((m) => m.source === 'template' && m.to === ADA.digits);
			assert(
				sent.length === 1,
				`expected 1 template message to ${ADA.digits}, the sandbox has ${sent.length} (${short(messages)})`,
			);
			const text = JSON.stringify(sent[0]);
			assert(
				text.includes('order_update') || text.includes('3f4bc6d6-5048-4a60-85ba-1afccb00f004'),
				`message is not the order_update template: ${text.slice(0, 300)}`,
			);
			assert(
				text.includes('Ada') && text.includes('A-100'),
				`template variables Ada / A-100 not in the message: ${text.slice(0, 300)}`,
			);
		},
		'tag-and-close-conversation.json': async () => {
			// An empty PATCH changes nothing and answers the contact as the service holds it.
			const { contact } = await externalPatch(`/contacts/${ADA.uuid}`, {});
			assert(
				JSON.stringify(contact[0].tags) === JSON.stringify(['vip', 'gold']),
				`tags should be replaced by ["vip","gold"] (seeded ["e2e-stale"]), are ${short(contact[0].tags)}`,
			);
			assert(
				typeof contact[0].closedAt === 'string',
				`the conversation should be closed (closedAt set), closedAt is ${short(contact[0].closedAt)}`,
			);
		},
		'agent-with-handoff.json': async () => {
			const [created] = outputOf('agent-with-handoff.json', 'Create agent');
			assert(created?.id, `Create agent returned no id: ${short(created)}`);
			const { agent } = await externalGet(`/agents/${created.id}`);
			assert(agent.name === 'Order helper', `agent name ${short(agent.name)}`);
			const handoff = agent.tools?.handoff_to_human_control;
			assert(handoff?.enabled === true, `handoff should be enabled: ${short(agent.tools)}`);
			assert(
				/asks for a refund/.test(handoff?.instructions ?? ''),
				`handoff instructions were not updated: ${short(handoff)}`,
			);
		},
		'nightly-reindex.json': async () => {
			const [started] = outputOf('nightly-reindex.json', 'Reindex products');
			const runId = started?.id ?? started?.run_id;
			assert(runId, `Reindex products returned no run id: ${short(started)}`);
			let run;
			for (let i = 0; i < 120; i++) {
				run = await runnerGet(`/api/reindex/${runId}`);
				if (!['queued', 'running'].includes(run.state)) break;
				await sleep(500);
			}
			assert(run.state === 'completed', `reindex run ${runId} is ${run.state}: ${short(run)}`);
			assert(
				run.counts?.created === FEED_SKUS.length,
				`the run should create ${FEED_SKUS.length} items: ${short(run.counts)}`,
			);
			const items = await externalGet(`/search/items?collection_id=${PRODUCTS_COLLECTION}`);
			const active = items.items
				.filter((item) => item.is_active)
				.map((item) => item.external_id)
				.sort();
			for (const sku of FEED_SKUS)
				assert(active.includes(sku), `the sandbox has no active item ${sku}: ${short(active)}`);
		},
		'ai-agent-looks-up-conversation.json': async () => {
			const [answer] = outputOf('ai-agent-looks-up-conversation.json', 'AI Agent');
			assert(typeof answer?.output === 'string', `the agent gave no output: ${short(answer)}`);
			assert(
				answer.output.includes(manifest.adaInbound),
				`the answer does not hold Ada's last message "${manifest.adaInbound}": ${short(answer.output)}`,
			);
			const requests = await getJson(`${manifest.stubUrl}/__stub/requests`);
			const toolCall = requests.find((r) => r.answer.tool_calls?.length);
			assert(toolCall, `the model never called a tool; it was offered ${short(requests.map((r) => r.tools))}`);
			const toolResult = requests.flatMap((r) => r.messages).find((m) => m.role === 'tool');
			assert(
				toolResult && JSON.stringify(toolResult.content).includes(manifest.adaInbound),
				`no tool result with Ada's message reached the model: ${short(toolResult)}`,
			);
			const lookups = requestsDuring('ai-agent-looks-up-conversation.json', 'GET /api/external/v2/conversations');
			assert(
				lookups === 1,
				`the sandbox got ${lookups} conversation lookups during the agent's execution, expected the tool's 1`,
			);
		},
	};

	// --- the pack as n8n users get it: the packed tarball, installed as a community package ----------
	/** One n8n process's community install: <installFile> written by install-package.mjs, <n8nFolder> its N8N_USER_FOLDER/.n8n. */
	const installedAsCommunityPackage = (installFile, n8nFolder) => {
		const installed = readJsonFile(installFile);
		assert(installed?.dir, `${installFile} missing: the community install did not run`);
		assert(
			installed.name === PACK.name && installed.version === PACK.version,
			`installed ${installed.name}@${installed.version}, expected ${PACK.name}@${PACK.version}`,
		);
		// n8n's nodes folder: <N8N_USER_FOLDER>/.n8n/nodes (InstanceSettings.nodesDownloadDir).
		const nodesDir = join(n8nFolder, 'nodes');
		assert(
			existsSync(join(nodesDir, 'node_modules', PACK.name, 'package.json')),
			`no ${PACK.name} in ${nodesDir}/node_modules`,
		);
		assert(
			realpathSync(installed.dir) === realpathSync(join(nodesDir, 'node_modules', PACK.name)),
			`installed at ${installed.dir}, not in n8n's ${nodesDir}/node_modules`,
		);
		const dependencies = JSON.parse(readFileSync(join(nodesDir, 'package.json'), 'utf8')).dependencies;
		assert(
			dependencies?.[PACK.name] === PACK.version,
			`nodes/package.json does not record the package: ${short(dependencies)}`,
		);
		// Only the pack itself: n8n-workflow and zod must come from n8n (its NODE_PATH), as for a user.
		const beside = readdirSync(join(nodesDir, 'node_modules')).filter((name) => !name.startsWith('.'));
		assert(
			beside.length === 1 && beside[0] === PACK.name,
			`nodes/node_modules holds more than the pack: ${beside.join(', ')}`,
		);
		const home = realpathSync(installed.dir);
		assert(
			!home.startsWith(`${realpathSync(ROOT)}/`),
			`the n8n user folder is inside the checkout (${home}); the checkout's node_modules could stand in for n8n's`,
		);
		assert(!process.env.N8N_CUSTOM_EXTENSIONS, `N8N_CUSTOM_EXTENSIONS is set (${process.env.N8N_CUSTOM_EXTENSIONS})`);
		// What was installed is the current build (the bundle n8n loads is the one dist/ holds).
		for (const file of PACK.n8n.nodes) {
			assert(
				readFileSync(join(installed.dir, file)).equals(readFileSync(join(PACK_DIR, file))),
				`${file} in the installed package differs from dist/`,
			);
		}
		const types = [
			...new Set(
				manifest.workflows
					.flatMap((w) => w.nodes.map((n) => n.type))
					.filter((type) => type.startsWith(manifest.packTypePrefix)),
			),
		];
		assert(
			types.length >= 3,
			`the examples use the installed package's node types ${manifest.packTypePrefix}*: ${types.join(', ')}`,
		);
	};
	if (queue) {
		// Each process its own user folder, as separate containers or hosts have: a process without the pack fails its part.
		for (const [role, name] of [
			['main', 'main'],
			['worker', 'the worker'],
			['webhook', 'the webhook processor'],
		]) {
			await check(
				`the packed tarball is installed as a community package in ${name}'s own user folder, and nothing else can load the pack`,
				async () => {
					installedAsCommunityPackage(`community-install-${role}.json`, join(outDir, 'n8n-homes', role, '.n8n'));
				},
			);
		}
	} else {
		await check(
			"the packed tarball is installed as a community package in n8n's nodes folder, and n8n has no other way to load the pack",
			async () => {
				installedAsCommunityPackage('community-install.json', join(process.env.N8N_USER_FOLDER ?? '', '.n8n'));
			},
		);
	}

	/** Every node of the pack ran and returned items, in an execution's resultData. */
	const packNodesRan = (wf, resultData) => {
		assert(!resultData.error, `workflow error: ${resultData.error?.message} ${resultData.error?.description ?? ''}`);
		for (const node of wf.nodes.filter((n) => n.type.startsWith(manifest.packTypePrefix))) {
			const nodeRuns = resultData.runData?.[node.name];
			assert(nodeRuns?.length, `node "${node.name}" did not run`);
			const last = nodeRuns.at(-1);
			assert(!last.error, `node "${node.name}" failed: ${last.error?.message}`);
			// A tool's results go to the agent (ai_tool), a node's to its main output.
			const items = node.type.endsWith('Tool') ? (last.data?.ai_tool?.[0] ?? []) : (last.data?.main?.[0] ?? []);
			assert(items.length > 0, `node "${node.name}" returned no items`);
			assert(!items.some((item) => item.json?.error), `node "${node.name}" returned an error item: ${short(items)}`);
		}
	};
	const errorText = (error) =>
		`${error.message}${error.description ? ` (${error.description})` : ''}${error.node?.name ? ` in node "${error.node.name}"` : ''}`;

	for (const wf of manifest.workflows.filter((w) => w.mode !== 'publish')) {
		const label = `${wf.file} (${wf.id})`;
		if (queue) {
			await check(`${label}: run through main's REST API, executed by the worker, succeeded`, async () => {
				const executed = readJsonFile(join('exec', `${wf.id}.json`));
				assert(executed, 'it was not executed (an earlier step failed or was skipped)');
				assert(!executed.error, executed.error);
				const resultData = executed.run?.resultData;
				assert(resultData, `no run data for execution ${executed.executionId}: ${short(executed)}`);
				assert(
					executed.status === 'success',
					`execution ${executed.executionId} is ${executed.status}${resultData.error ? `: ${errorText(resultData.error)}` : ''}`,
				);
				runs[wf.file] = resultData;
				packNodesRan(wf, resultData);
				ranOnTheWorker(executed.executionId, 'main');
			});
		} else {
			const rcFile = join(outDir, 'exec', `${wf.id}.rc`);
			await check(`${label}: n8n execute succeeded`, async () => {
				assert(existsSync(rcFile), 'it was not executed (an earlier step failed or was skipped)');
				const text = readFileSync(join(outDir, 'exec', `${wf.id}.out`), 'utf8');
				const rc = Number(readFileSync(rcFile, 'utf8').trim());
				if (rc !== 0) {
					let reason = text.slice(-400);
					try {
						const error = parseRun(text).data?.resultData?.error;
						if (error) reason = errorText(error);
					} catch {
						// no run data printed: keep the output's tail
					}
					throw new Error(`n8n execute exited ${rc}: ${reason}`);
				}
				const run = parseRun(text);
				const resultData = run.data?.resultData ?? run.resultData;
				assert(resultData, `no resultData in the run: ${short(run)}`);
				runs[wf.file] = resultData;
				packNodesRan(wf, resultData);
			});
		}
		const effect = effects[wf.file];
		if (effect) await check(`${label}: left its effect in the sandbox or the runner`, effect);
	}

	// --- live: published workflows under `n8n start` ------------------------------------------
	const skipLive = process.env.E2E_SKIP_LIVE === '1';
	if (!skipLive) {
		const reply = readJsonFile('live-reply.json') ?? { error: 'live-reply.json missing: the live step did not run' };
		await check(
			'reply-to-inbound-message.json (published): the sandbox delivered the inbound message to n8n with 200',
			async () => {
				assert(reply.delivery, `no delivery to ${reply.url}: ${short(reply.error ?? reply)}`);
				assert(
					reply.delivery.statusCode === 200 || reply.delivery.status === 200,
					`delivery answered ${short(reply.delivery)}`,
				);
			},
		);
		await check(
			'reply-to-inbound-message.json (published): one successful execution, and one reply quoting the message in the sandbox',
			async () => {
				assert(reply.execution, `no execution found: ${short(reply.executions ?? reply.error)}`);
				assert(
					reply.execution.status === 'success',
					`execution status ${reply.execution.status}: ${reply.execution.error ?? ''}`,
				);
				assert(
					reply.execution.count === 1,
					`expected exactly 1 execution (the reply must not start another), n8n has ${reply.execution.count}`,
				);
				const replies = reply.messages.filter((m) => (m.text ?? '').includes(reply.text));
				assert(
					replies.length === 1,
					`expected 1 reply to Ada quoting "${reply.text}", the sandbox has ${replies.length}: ${short(reply.messages)}`,
				);
				assert(
					replies[0].text.startsWith('Hi Ada'),
					`the reply does not greet Ada by her first name: ${short(replies[0].text)}`,
				);
			},
		);

		const registered = readJsonFile('live-runner.json');
		await check(
			'campaign-finished-summary.json (published): the Convo Runner Trigger registered its URL with the runner',
			async () => {
				assert(registered, 'live-runner.json missing: the live step did not run');
				const webhookId = registered.webhookIds['campaign-finished-summary.json'];
				const hook = registered.webhooks.find((h) => h.url.includes(webhookId));
				assert(hook, `no runner webhook for ${webhookId}: ${short(registered.webhooks)}`);
				assert(JSON.stringify(hook.events) === JSON.stringify(['campaign.finished']), `events ${short(hook.events)}`);
				assert(!('secret' in hook), 'the runner lists a webhook secret');
			},
		);
		await check(
			'campaign-delivery-settled-followup.json (published): the Convo Runner Trigger registered its URL with the runner for campaign.delivery_settled',
			async () => {
				assert(registered, 'live-runner.json missing: the live step did not run');
				const webhookId = registered.webhookIds['campaign-delivery-settled-followup.json'];
				const hooks = registered.webhooks.filter((h) => h.url.includes(webhookId));
				assert(hooks.length === 1, `expected 1 runner webhook for ${webhookId}: ${short(registered.webhooks)}`);
				assert(
					JSON.stringify(hooks[0].events) === JSON.stringify(['campaign.delivery_settled']),
					`events ${short(hooks[0].events)}`,
				);
			},
		);
		const campaign = readJsonFile('live-campaign.json');
		await check(
			'campaign-from-customer-list.json: one campaign, 4 recipients sent once each, 2 rows rejected',
			async () => {
				assert(campaign, 'live-campaign.json missing: the live step did not run');
				const [created] = outputOf('campaign-from-customer-list.json', 'Create campaign');
				assert(created, 'Create campaign returned nothing');
				assert(
					created.accepted === 4 && created.rejected === 2,
					`accepted/rejected ${created.accepted}/${created.rejected}: ${short(created)}`,
				);
				assert(
					campaign.campaign?.state === 'completed',
					`campaign ${campaign.campaignId} is ${campaign.campaign?.state ?? 'not finished'}: ${short(campaign.campaign)}`,
				);
				const sends = campaign.messages.filter((m) => CAMPAIGN_PHONES.includes(m.to));
				assert(
					sends.length === 4 && new Set(sends.map((m) => m.to)).size === 4,
					`expected one template send to each of ${CAMPAIGN_PHONES.join(', ')}: ${short(sends.map((m) => m.to))}`,
				);
			},
		);
		await check(
			'campaign-finished-summary.json (published): campaign.finished started one execution that counted the report by outcome',
			async () => {
				assert(campaign?.execution, `no execution of the summary workflow: ${short(campaign?.executions ?? campaign)}`);
				assert(
					campaign.execution.status === 'success',
					`execution status ${campaign.execution.status}: ${campaign.execution.error ?? ''}`,
				);
				assert(
					campaign.execution.count === 1,
					`expected exactly 1 execution for the one event, n8n has ${campaign.execution.count}`,
				);
				const [event] = campaign.execution.nodes['Convo Runner Trigger'] ?? [];
				assert(
					event?.type === 'campaign.finished' && event.data?.id === campaign.campaignId,
					`the trigger's event is not this campaign's campaign.finished: ${short(event)}`,
				);
				const summary = Object.fromEntries(
					(campaign.execution.nodes['Count by outcome'] ?? []).map((row) => [row.outcome, row.count_phone]),
				);
				assert(summary.sent === 4, `the summary should count 4 sent: ${short(summary)}`);
				assert(summary.rejected === 2, `the summary should count 2 rejected: ${short(summary)}`);
			},
		);
		const settled = readJsonFile('live-settled.json');
		await check(
			"campaign-delivery-settled-followup.json (published): campaign.delivery_settled started exactly one execution, with the campaign's id and funnel, that listed the 4 who read and did not reply",
			async () => {
				assert(settled, 'live-settled.json missing: the live step did not run');
				assert(settled.execution, `no execution of the follow-up workflow: ${short(settled.executions ?? settled)}`);
				assert(
					settled.execution.status === 'success',
					`execution status ${settled.execution.status}: ${settled.execution.error ?? ''}`,
				);
				assert(
					settled.execution.count === 1,
					`expected exactly 1 execution for the one campaign, n8n has ${settled.execution.count} (${short(settled.executions)})`,
				);
				const [event] = settled.execution.nodes['Convo Runner Trigger'] ?? [];
				assert(
					event?.type === 'campaign.delivery_settled',
					`the trigger's event is not campaign.delivery_settled: ${short(event)}`,
				);
				assert(
					event.data?.id === campaign?.campaignId && event.data.id === settled.campaignId,
					`the event is for ${event.data?.id}, the campaign is ${campaign?.campaignId}`,
				);
				// The funnel is the sandbox's: every message to the 4 customers is read by now (default timeline), none replied.
				const sends = settled.messages.filter((m) => CAMPAIGN_PHONES.includes(m.to));
				const read = sends.filter((m) => m.status === 'read').length;
				assert(
					sends.length === 4 && read === 4,
					`the sandbox should show 4 read template messages to ${CAMPAIGN_PHONES.join(', ')}: ${short(sends.map((m) => [m.to, m.status]))}`,
				);
				const funnel = event.data.funnel;
				const expected = {
					audience: 6,
					accepted: 4,
					sent: 4,
					delivered: 4,
					read,
					replied: 0,
					failed_delivery: 0,
					in_flight: 0,
					tracking: 'messaging_api',
					settled: true,
				};
				for (const [key, value] of Object.entries(expected))
					assert(
						funnel?.[key] === value,
						`funnel.${key} is ${short(funnel?.[key])}, expected ${short(value)}: ${short(funnel)}`,
					);
				assert(
					JSON.stringify(settled.campaign?.funnel) === JSON.stringify(funnel),
					`the event's funnel differs from the campaign's now: ${short(settled.campaign?.funnel)}`,
				);
				const followUp = settled.execution.nodes['Read, no reply'] ?? [];
				assert(
					JSON.stringify(followUp.map((row) => row.phone.replace(/\D/g, '')).sort()) ===
						JSON.stringify([...CAMPAIGN_PHONES].sort()),
					`the follow-up list should be the 4 customers: ${short(followUp)}`,
				);
				assert(
					followUp.every((row) => row.delivery === 'read' && row.replied_at === null && row.read_at),
					`every listed row should be read, not replied: ${short(followUp)}`,
				);
			},
		);
	}
	if (queue) await checkQueueOnly();

	// --- queue mode only: which process did what --------------------------------------------------
	async function checkQueueOnly() {
		const setup = readJsonFile('queue.json') ?? {};
		await check(
			"main serves no production webhooks (N8N_DISABLE_PRODUCTION_MAIN_PROCESS): the reply example's URL answers 404 there",
			async () => {
				const probe = readJsonFile('main-webhooks.json');
				assert(probe, 'main-webhooks.json missing: the probe did not run');
				assert(probe.status === 404, `main answered ${probe.status} at ${probe.url}`);
			},
		);
		const reply = readJsonFile('live-reply.json');
		await check(
			"reply-to-inbound-message.json (published): the Convo Trigger's message_created came through the webhook processor, which enqueued it, and the worker executed it",
			async () => {
				assert(reply?.execution, `no execution of the reply workflow: ${short(reply)}`);
				assert(
					setup.webhookUrl && reply.url.startsWith(`${setup.webhookUrl}/webhook/`),
					`the delivery went to ${reply.url}, not to the webhook processor at ${setup.webhookUrl}`,
				);
				ranOnTheWorker(reply.executions.at(-1).id, 'webhook');
			},
		);
		const registered = readJsonFile('live-runner.json');
		const campaign = readJsonFile('live-campaign.json');
		const settled = readJsonFile('live-settled.json');
		for (const [file, live] of [
			['campaign-finished-summary.json', campaign],
			['campaign-delivery-settled-followup.json', settled],
		]) {
			await check(
				`${file} (published): the runner's signed event came through the webhook processor, which enqueued it, and the worker executed it`,
				async () => {
					const webhookId = registered?.webhookIds?.[file];
					const hook = registered?.webhooks?.find((h) => h.url.includes(webhookId));
					assert(hook, `no runner webhook for ${file}: ${short(registered)}`);
					assert(
						setup.webhookUrl && hook.url.startsWith(`${setup.webhookUrl}/webhook/`),
						`the Convo Runner Trigger registered ${hook.url}, not the webhook processor's ${setup.webhookUrl}`,
					);
					assert(live?.execution, `no execution: ${short(live)}`);
					ranOnTheWorker(live.executions.at(-1).id, 'webhook');
				},
			);
		}
	}
}

await checkRun(outDir, 'single');
if (process.env.E2E_SKIP_QUEUE !== '1') {
	const queueDir = join(outDir, 'queue');
	if (existsSync(join(queueDir, 'manifest.json'))) await checkRun(queueDir, 'queue');
	else {
		const why = existsSync(join(queueDir, 'queue-error.json'))
			? JSON.parse(readFileSync(join(queueDir, 'queue-error.json'), 'utf8')).error
			: 'the queue-mode phase did not run';
		await record('queue mode: the phase ran', async () => assert(false, why));
	}
}

// --- npm run dev ------------------------------------------------------------------------------
const singleManifest = JSON.parse(readFileSync(join(outDir, 'manifest.json'), 'utf8'));
if (process.env.E2E_SKIP_DEV !== '1') {
	const dev = (existsSync(join(outDir, 'dev.json'))
		? JSON.parse(readFileSync(join(outDir, 'dev.json'), 'utf8'))
		: undefined) ?? { error: 'dev.json missing: the dev step did not run' };
	await record('npm run dev: printed the editor URL and the sign-in, and the sign-in works', async () => {
		assert(
			dev.editorUrl && dev.email && dev.passwordShown,
			`no editor URL or sign-in printed: ${short(dev.error ?? dev)}`,
		);
		assert(dev.login === 200, `POST /rest/login answered ${dev.login}`);
	});
	await record('npm run dev: a credential of every type the examples use, and every example imported', async () => {
		for (const type of ['convoApi', 'convoExternalApi', 'convoTriggerApi', 'convoRunnerApi', 'openAiApi']) {
			assert(dev.credentialTypes?.includes(type), `no ${type} credential: ${short(dev.credentialTypes)}`);
		}
		const missing = singleManifest.workflows.filter((w) => !dev.workflowIds?.includes(w.id)).map((w) => w.file);
		assert(missing.length === 0, `examples not imported: ${missing.join(', ')}`);
	});
	await record(
		'npm run dev: credential tests pass in n8n (Convo API, External API, Runner API, OpenAI stub)',
		async () => {
			assert(dev.credentialTests, `no credential test ran: ${short(dev.error)}`);
			for (const [type, outcome] of Object.entries(dev.credentialTests))
				assert(outcome.status === 'OK', `${type}: ${short(outcome)}`);
			assert(
				Object.keys(dev.credentialTests).length >= 4,
				`only ${Object.keys(dev.credentialTests).join(', ')} tested`,
			);
		},
	);
	await record('npm run dev: Ctrl-C (SIGINT) stops it, and every process group it started is gone', async () => {
		assert(dev.exit !== undefined, `it did not exit after SIGINT: ${short(dev.error)}`);
		assert(dev.groups?.length >= 4, `it recorded ${dev.groups?.length ?? 0} process groups`);
		assert(dev.leftAlive?.length === 0, `still alive after it exited: ${short(dev.leftAlive)}`);
	});
	await record(
		'npm run dev again: the same sign-in, the workflows once each, credentials for the new ports pass their tests, Ctrl-C stops it',
		async () => {
			const again = dev.second;
			assert(again, `the second start did not run: ${short(dev.error)}`);
			assert(!again.error, again.error);
			assert(again.samePassword && again.login === 200, `sign-in with the first start's password: ${again.login}`);
			assert(again.sandboxMoved, 'the sandbox had the same port both times; the credential update is not shown');
			assert(
				JSON.stringify([...again.workflowIds].sort()) === JSON.stringify([...dev.workflowIds].sort()),
				`workflows changed: ${short(again.workflowIds)}`,
			);
			for (const [type, outcome] of Object.entries(again.credentialTests ?? {}))
				assert(outcome.status === 'OK', `${type}: ${short(outcome)}`);
			assert(Object.keys(again.credentialTests ?? {}).length >= 4, 'credentials not tested');
			assert(
				again.exit !== undefined && again.leftAlive?.length === 0,
				`after SIGINT: exit ${short(again.exit)}, alive ${short(again.leftAlive)}`,
			);
		},
	);
}

const passed = results.filter((r) => r.ok).length;
const failed = results.length - passed;
console.log(`e2e: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
