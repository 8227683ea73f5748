import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { convoNode, itemsThen, runWorkflow } from '../harness/workflow';

// The harness itself, against a tiny local server: credentials are resolved from the credential
// class (the bearer header), expressions are evaluated per item, and errors reach the run data.
describe('workflow harness', () => {
	const seen: Array<{ url?: string; auth?: string }> = [];
	const server = createServer((req: IncomingMessage, res: ServerResponse) => {
		seen.push({ url: req.url, auth: req.headers.authorization });
		const ok = req.headers.authorization === 'Bearer good';
		res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
		res.end(
			JSON.stringify(
				ok
					? { message: { uuid: req.url?.split('/').pop(), status: 'enqueued' } }
					: { status: 401, code: 'unauthorized', message: 'no' },
			),
		);
	});
	let baseUrl = '';
	beforeAll(async () => {
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`;
	});
	afterAll(async () => await new Promise<void>((resolve) => server.close(() => resolve())));

	it('runs a Convo node with expressions and the bearer credential', async () => {
		const result = await runWorkflow(
			itemsThen(
				[{ id: 'm-1' }, { id: 'm-2' }],
				convoNode({ resource: 'message', operation: 'getStatus', messageUuid: '={{ $json.id }}' }),
			),
			{ credentials: { convoApi: { baseUrl, accessToken: 'good' } } },
		);
		expect(result.errorOf('Convo')).toBeUndefined();
		expect(result.outputOf('Convo').map((item) => item.json)).toEqual([
			{ uuid: 'm-1', status: 'enqueued' },
			{ uuid: 'm-2', status: 'enqueued' },
		]);
		expect(seen.slice(-2)).toEqual([
			{ url: '/v1/messages/status/m-1', auth: 'Bearer good' },
			{ url: '/v1/messages/status/m-2', auth: 'Bearer good' },
		]);
	});

	it('reports a refused token as the node error', async () => {
		const result = await runWorkflow(
			itemsThen([{}], convoNode({ resource: 'message', operation: 'getStatus', messageUuid: 'x' })),
			{ credentials: { convoApi: { baseUrl, accessToken: 'bad' } } },
		);
		expect(result.errorOf('Convo')?.message).toContain('access token was refused');
	});
});
