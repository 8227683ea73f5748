/* global fetch, setTimeout, AbortSignal */
// The dev step of the e2e run: `npm run dev` as a new user starts it, in a process group of its
// own (as a terminal runs it), with its state in <outDir>/dev. Waits for the printed editor URL
// and sign-in, signs in through /rest/login, lists credentials and workflows, tests the
// credentials as the editor's "Test" button does, then sends SIGINT to the group (Ctrl-C) and
// checks that every process group `npm run dev` recorded is gone. Then once more: the second
// start must find the same account and workflows, with credentials for the services' new ports.
// Writes <outDir>/dev.json.
//
//   node test/e2e/dev-check.mjs <outDir>
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const outDir = process.argv[2];
const root = new URL('../../', import.meta.url).pathname;
const devDir = join(outDir, 'dev');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const result = {};
const save = () => writeFileSync(join(outDir, 'dev.json'), JSON.stringify(result, null, 2));

// A new user's shell: none of the e2e run's n8n settings, only where dev keeps its state and
// any free ports (the defaults may be taken on a shared machine). dist/ was built by run.sh.
// The password stays out of dev.json: only whether it was shown and worked.
const env = Object.fromEntries(
	Object.entries(process.env).filter(([name]) => !/^(N8N_|E2E_RUNNER|DB_TYPE|REDIS_URL|RUNNER_|npm_)/.test(name)),
);
Object.assign(env, {
	DEV_DIR: devDir,
	DEV_SKIP_BUILD: '1',
	DEV_N8N_PORT: '0',
	DEV_SANDBOX_PORT: '0',
	DEV_RUNNER_PORT: '0',
});

const groupAlive = (pid) => {
	try {
		process.kill(-pid, 0);
		return true;
	} catch {
		return false;
	}
};

async function rest(base, method, path, cookie, body) {
	const response = await fetch(`${base}${path}`, {
		method,
		headers: {
			...(cookie ? { cookie } : {}),
			...(body ? { 'content-type': 'application/json' } : {}),
			'browser-id': 'e2e-dev-check',
		},
		body: body ? JSON.stringify(body) : undefined,
		signal: AbortSignal.timeout(30_000),
	});
	const text = await response.text();
	let json;
	try {
		json = JSON.parse(text);
	} catch {
		json = text;
	}
	return {
		status: response.status,
		json,
		cookie: response.headers
			.getSetCookie?.()
			.map((c) => c.split(';')[0])
			.join('; '),
	};
}

/** One `npm run dev` from start to Ctrl-C: what it printed, what n8n then holds, what it left running. */
async function session() {
	const record = {};
	const child = spawn('npm', ['run', 'dev', '--silent'], {
		cwd: root,
		env,
		detached: true,
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	let output = '';
	child.stdout.on('data', (chunk) => (output += chunk));
	child.stderr.on('data', (chunk) => (output += chunk));
	let ended;
	const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
	void exited.then((value) => (ended = value));
	try {
		const started = Date.now();
		// The banner: "  n8n editor   http://..." and "  sign in      <email>  /  <password>".
		while (!/sign in\s+\S+\s+\/\s+\S+/.test(output)) {
			if (ended) throw new Error(`npm run dev exited (${JSON.stringify(ended)}) before printing the sign-in`);
			if (Date.now() - started > 300_000) throw new Error('npm run dev printed no sign-in within 300 s');
			await sleep(500);
		}
		record.readyAfterSeconds = Math.round((Date.now() - started) / 1000);
		const editorUrl = /n8n editor\s+(http:\/\/\S+)/.exec(output)?.[1];
		const [, email, password] = /sign in\s+(\S+)\s+\/\s+(\S+)/.exec(output);
		Object.assign(record, { editorUrl, email, passwordShown: Boolean(password), password });

		const login = await rest(editorUrl, 'POST', '/rest/login', undefined, { emailOrLdapLoginId: email, password });
		record.login = login.status;
		const cookie = login.cookie;
		const credentials = (await rest(editorUrl, 'GET', '/rest/credentials', cookie)).json.data ?? [];
		record.credentialTypes = credentials.map((c) => c.type).sort();
		const workflows = (await rest(editorUrl, 'GET', '/rest/workflows', cookie)).json.data ?? [];
		record.workflowIds = workflows.map((w) => w.id);
		record.activeWorkflows = workflows.filter((w) => w.active).map((w) => w.id);

		// As the editor's "Test" button: the credential as the editor holds it (secrets redacted), then /test.
		record.credentialTests = {};
		for (const credential of credentials.filter((c) =>
			['convoApi', 'convoExternalApi', 'convoRunnerApi', 'openAiApi'].includes(c.type),
		)) {
			const full = (await rest(editorUrl, 'GET', `/rest/credentials/${credential.id}?includeData=true`, cookie)).json
				.data;
			const test = await rest(editorUrl, 'POST', '/rest/credentials/test', cookie, {
				credentials: { id: full.id, name: full.name, type: full.type, data: full.data },
			});
			record.credentialTests[credential.type] = test.json.data ?? {
				status: `HTTP ${test.status}`,
				message: JSON.stringify(test.json).slice(0, 200),
			};
		}
	} catch (error) {
		record.error = String(error instanceof Error ? error.message : error);
	} finally {
		const groupsFile = join(devDir, 'pids.json');
		// Ctrl-C in a terminal: SIGINT to the foreground process group (npm and the dev script).
		if (!ended) process.kill(-child.pid, 'SIGINT');
		const deadline = Date.now() + 60_000;
		while (!ended && Date.now() < deadline) await sleep(200);
		record.exit = ended;
		record.groups = existsSync(groupsFile) ? JSON.parse(readFileSync(groupsFile, 'utf8')) : [];
		await sleep(500);
		record.leftAlive = [...record.groups, { name: 'npm run dev', pid: child.pid }].filter((group) =>
			groupAlive(group.pid),
		);
		// Never leave anything behind, whatever the check found.
		for (const group of record.leftAlive) process.kill(-group.pid, 'SIGKILL');
		const tail = output.split('\n').slice(-40).join('\n');
		record.outputTail = record.password ? tail.split(record.password).join('<the printed password>') : tail;
	}
	return record;
}

// The first start, as a new user's; then a second one, which must find the same account and
// workflows and bring credentials for the services' new ports.
const first = await session();
const { password, ...shownFirst } = first;
Object.assign(result, shownFirst);
if (!first.error) {
	const second = await session();
	result.second = {
		samePassword: second.password === password,
		login: second.login,
		workflowIds: second.workflowIds,
		credentialTests: second.credentialTests,
		sandboxMoved:
			/^\s+sandbox\s+(http\S+)/m.exec(first.outputTail)?.[1] !==
			/^\s+sandbox\s+(http\S+)/m.exec(second.outputTail)?.[1],
		exit: second.exit,
		leftAlive: second.leftAlive,
		error: second.error,
	};
}
save();
console.error(
	`dev step: ${result.error ?? result.second?.error ?? 'ok'}; ready after ${result.readyAfterSeconds ?? '?'} s (again: ${result.second ? 'yes' : 'not run'}); exit ${JSON.stringify(result.exit)}`,
);
