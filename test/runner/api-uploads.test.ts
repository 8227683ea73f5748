// @serial: measures upload idle and total timeouts in wall time
/**
 * The uploads of the control API (a campaign's CSV body, a suppression import) and its connections,
 * against a running `convo-runner start` (real Redis, the sandbox) with short upload limits: a CSV
 * that cannot be read is a 400 naming the problem (and the CLI says so in one line), a client that
 * stalls or trickles gets 408 and its connection closed, and past RUNNER_MAX_CONNECTIONS a new
 * connection is closed as it arrives while the runner keeps serving.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { apiCaller, positionalTemplate, rawUpload, runCli, startApi, useRunnerUnderTest, waitFor } from './support';

jest.setTimeout(120_000);

const TOKEN = 'test-token-0123456789abcdef';
const runner = useRunnerUnderTest({
	RUNNER_TOKEN: TOKEN,
	RUNNER_UPLOAD_IDLE_TIMEOUT: '1s',
	// An upload may take 2 s plus 1 s per 100 bytes: a byte every 250 ms is ended after about 2 s.
	RUNNER_UPLOAD_DEADLINE: '2s',
	RUNNER_UPLOAD_MIN_BYTES_PER_SECOND: '100',
});
let base = '';
let port = 0;

beforeAll(async () => {
	base = await startApi(runner);
	port = Number(new URL(base).port);
});

const call = apiCaller(() => base, TOKEN);
const phoneOf = (seed: number, i: number) => `4917${String(seed).padStart(3, '0')}${String(i).padStart(6, '0')}`;
const IMPORT = '/api/suppressions/import';
/** Bytes a binary file starts with: a PNG's signature and header (NUL bytes, and bytes that are not UTF-8). */
const BINARY = Buffer.from([
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0xff, 0xfe, 0xc3,
	0x28,
]);

async function postCsv(
	path: string,
	body: string | Buffer,
): Promise<{ status: number; json: { status: number; message: string } }> {
	const response = await fetch(`${base}${path}`, {
		method: 'POST',
		headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/csv' },
		body,
	});
	return { status: response.status, json: (await response.json()) as { status: number; message: string } };
}

test('an import of an empty, binary or unclosed-quote CSV is a 400 naming the problem and its line, as a campaign upload is', async () => {
	const campaign = `/api/campaigns?${new URLSearchParams({ template_id: positionalTemplate(runner.business).id, from: runner.business.phoneNumbers[0] }).toString()}`;
	const unclosed = ['phone,reason', `${phoneOf(1, 0)},"never closed`, `${phoneOf(1, 1)},x`, ''].join('\n');
	const cases: Array<[string, string | Buffer, RegExp]> = [
		['empty', '', /^the upload is empty; nothing was imported$/],
		['binary', BINARY, /^the upload is a binary file, not CSV, JSON or NDJSON text; nothing was imported$/],
		[
			'unclosed quote',
			unclosed,
			/^the upload is not valid CSV at line \d+: a quoted cell is never closed; nothing was imported$/,
		],
	];
	for (const [what, body, message] of cases) {
		const imported = await postCsv(IMPORT, body);
		expect({ what, status: imported.status, body: imported.json }).toEqual({
			what,
			status: 400,
			body: expect.objectContaining({ status: 400, message: expect.stringMatching(message) }),
		});
		// The campaign upload refuses the same bodies with a 400 too.
		expect({ what, status: (await postCsv(campaign, body)).status }).toEqual({ what, status: 400 });
	}
	// The line where the quote opens (the header is line 1), though the parser finds it open only at the end.
	expect((await postCsv(IMPORT, unclosed)).json.message).toContain('at line 2:');
	// Found after 2000 good rows (and a blank line): those read before it may be on the list, and the answer says so.
	const good = Array.from({ length: 2000 }, (_, i) => `${phoneOf(6, i)},kept`);
	const late = await postCsv(
		IMPORT,
		['phone,reason', ...good, '', `${phoneOf(1, 3)},"never closed`, `${phoneOf(1, 5)},x`, ''].join('\n'),
	);
	expect(late.status).toBe(400);
	expect(late.json.message).toBe(
		'the upload is not valid CSV at line 2003: a quoted cell is never closed; the import stopped there (rows read before it may already be on the list)',
	);
	// The runner still serves, and a good import still works.
	expect((await call('POST', IMPORT, `phone\n${phoneOf(1, 4)}\n`, { 'content-type': 'text/csv' })).json).toMatchObject({
		rows: 1,
		added: 1,
	});
});

test('the CLI import of an empty, binary, unclosed-quote or missing file prints one line naming the problem, no stack trace, and exits 1', async () => {
	const dir = mkdtempSync(join(tmpdir(), 'convo-import-'));
	const file = (name: string, body: string | Buffer) => {
		writeFileSync(join(dir, name), body);
		return join(dir, name);
	};
	const cases: Array<[string, RegExp]> = [
		[file('empty.csv', ''), /is empty; nothing was imported$/],
		[file('binary.csv', BINARY), /is a binary file, not CSV, JSON or NDJSON text; nothing was imported$/],
		[
			file('unclosed.csv', ['phone,reason', `${phoneOf(2, 0)},"never closed`, ''].join('\n')),
			/is not valid CSV at line 2: a quoted cell is never closed; nothing was imported$/,
		],
		[join(dir, 'missing.csv'), /cannot read .*missing\.csv: no such file; nothing was imported$/],
	];
	for (const [path, message] of cases) {
		const run = await runCli(['suppression', 'import', path], runner.env);
		const lines = run.stderr.trimEnd().split('\n');
		expect({ path, code: run.code, lines }).toEqual({
			path,
			code: 1,
			lines: [expect.stringMatching(new RegExp(`^convo-runner: .*${message.source}`))],
		});
		expect(run.stderr).not.toContain('unexpected error');
	}
});

test('an import that sends nothing for RUNNER_UPLOAD_IDLE_TIMEOUT (1 s) gets 408 and its connection closed', async () => {
	const stalled = await rawUpload(
		port,
		{ path: IMPORT, token: TOKEN, total: 1000 },
		`phone\n${phoneOf(3, 0)}\n`,
		[],
		0,
	);
	expect(stalled.status).toBe(408);
	expect(stalled.text).toContain('RUNNER_UPLOAD_IDLE_TIMEOUT');
	expect(stalled.afterMs).toBeGreaterThanOrEqual(900);
	expect(stalled.afterMs).toBeLessThan(5000);
	expect(await stalled.closed).toBe(true);
});

test('an upload that trickles a byte every 250 ms is ended with 408 by RUNNER_UPLOAD_DEADLINE (2 s) and RUNNER_UPLOAD_MIN_BYTES_PER_SECOND (100), the import and a campaign alike; one fast enough is not', async () => {
	const head = `phone\n${phoneOf(4, 0)}\n`;
	const trickle = Array.from({ length: 60 }, () => '4');
	const campaign = `/api/campaigns?${new URLSearchParams({ template_id: positionalTemplate(runner.business).id, from: runner.business.phoneNumbers[0] }).toString()}`;
	for (const path of [IMPORT, campaign]) {
		const slow = await rawUpload(port, { path, token: TOKEN, total: 10_000 }, head, trickle, 250, 10_000);
		expect({ path, status: slow.status }).toEqual({ path, status: 408 });
		expect(slow.text).toContain('RUNNER_UPLOAD_MIN_BYTES_PER_SECOND');
		expect(slow.text).toContain('RUNNER_UPLOAD_DEADLINE');
		expect(slow.afterMs).toBeGreaterThanOrEqual(1900);
		expect(slow.afterMs).toBeLessThan(5000);
		expect(await slow.closed).toBe(true);
	}

	// 200 bytes every 500 ms (400 bytes/s) for 3 s: past the 2 s, but faster than the minimum.
	const rows = Array.from({ length: 6 }, (_, piece) =>
		Array.from({ length: 10 }, (_, i) => `${phoneOf(5, piece * 10 + i)},${'r'.repeat(6)}\n`).join(''),
	);
	const first = 'phone,reason\n';
	const total = Buffer.byteLength(first) + rows.reduce((sum, piece) => sum + Buffer.byteLength(piece), 0);
	const steady = await rawUpload(port, { path: IMPORT, token: TOKEN, total }, first, rows, 500);
	expect(steady.status).toBe(200);
	expect(steady.afterMs).toBeGreaterThanOrEqual(3000);
	expect(JSON.parse(steady.text.split('\r\n\r\n')[1])).toMatchObject({ rows: 60, added: 60, rejected: 0 });
	await steady.closed;
});

/** A connection to `port`: resolves once connected, with whether the server closed it within `withinMs` without a byte. */
async function connection(toPort: number, withinMs: number): Promise<{ socket: Socket; refused: boolean }> {
	const socket = connect(toPort, '127.0.0.1');
	socket.on('error', () => undefined);
	const closed = new Promise<boolean>((resolve) => socket.once('close', () => resolve(true)));
	await new Promise<void>((resolve) => {
		socket.once('connect', resolve);
		socket.once('close', resolve);
	});
	const refused = await Promise.race([
		closed,
		new Promise<boolean>((resolve) => setTimeout(() => resolve(false), withinMs)),
	]);
	return { socket, refused };
}

/** GET /healthz on an open connection: the answer's status (0 when the connection ends without one). */
function healthOn(socket: Socket): Promise<number> {
	return new Promise((resolve) => {
		let text = '';
		socket.on('data', (chunk) => {
			text += String(chunk);
			const status = /^HTTP\/1\.1 (\d+)/.exec(text);
			if (status && text.includes('\r\n\r\n')) resolve(Number(status[1]));
		});
		socket.once('close', () => resolve(0));
		socket.write('GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
	});
}

test('past RUNNER_MAX_CONNECTIONS (4) a new connection is closed as it arrives; the held ones are served, and new ones again once they go', async () => {
	const cappedBase = await startApi(runner, { RUNNER_MAX_CONNECTIONS: '4' });
	const cappedPort = Number(new URL(cappedBase).port);
	const capped = runner.processes[runner.processes.length - 1];
	// startApi's readiness poll may keep a connection of its own open: hold connections until one is refused.
	const held: Socket[] = [];
	let refused: Socket | undefined;
	try {
		for (let i = 0; i < 6 && !refused; i++) {
			const opened = await connection(cappedPort, 1000);
			if (opened.refused) refused = opened.socket;
			else held.push(opened.socket);
		}
		expect(refused).toBeDefined();
		expect(held.length).toBeGreaterThanOrEqual(3);
		expect(held.length).toBeLessThanOrEqual(4);
		// A second one past the cap is refused too, within a second.
		expect((await connection(cappedPort, 1000)).refused).toBe(true);
		expect(capped.output()).toContain('RUNNER_MAX_CONNECTIONS');
		expect(await healthOn(held[0])).toBe(200);
	} finally {
		held.forEach((socket) => socket.destroy());
	}
	// Once the held ones are gone, a new connection is served.
	await waitFor(
		'a new connection to be served',
		async () => {
			const opened = await connection(cappedPort, 100);
			const status = opened.refused ? 0 : await healthOn(opened.socket);
			opened.socket.destroy();
			return status === 200;
		},
		10_000,
		100,
	);
});
