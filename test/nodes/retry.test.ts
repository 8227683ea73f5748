import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { IDataObject } from 'n8n-workflow';

import { admin, credentialsOf, runConvo, sentMessages, useSandbox, TEXT_SEND_FROM_ITEM } from './support';

const SEND = 'POST /v1/messages/send';
/** n8n's node setting "Retry On Fail": 3 tries, 1 s apart (it runs the whole node again). */
const retryOnFail = { retryOnFail: true, maxTries: 3, waitBetweenTries: 1000 };

/**
 * A pass-through proxy in front of the sandbox that cuts the connection of chosen requests after
 * reading them, without forwarding: the client cannot tell whether the service acted on them.
 */
async function cuttingProxy(target: string, cut: (index: number, body: string) => boolean) {
	const received: string[] = [];
	const server = createServer((request: IncomingMessage, response) => {
		const chunks: Buffer[] = [];
		request.on('data', (chunk: Buffer) => chunks.push(chunk));
		request.on('end', () => {
			const body = Buffer.concat(chunks).toString();
			received.push(body);
			if (cut(received.length - 1, body)) {
				request.socket.destroy();
				return;
			}
			void fetch(`${target}${request.url}`, {
				method: request.method,
				headers: { authorization: String(request.headers.authorization), 'content-type': 'application/json' },
				body: request.method === 'GET' ? undefined : body,
			}).then(async (upstream) => {
				response.writeHead(upstream.status, { 'content-type': 'application/json' }).end(await upstream.text());
			});
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	return {
		url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
		received,
		close: () => new Promise((resolve) => server.close(resolve)),
	};
}

describe("Convo node: rate limits, retries and n8n's Retry On Fail", () => {
	const context = useSandbox();
	const inWindow = () => context.business.contacts.find((c) => c.inWindow && !c.undeliverable)!;
	const send = TEXT_SEND_FROM_ITEM;
	const messages = (count: number): IDataObject[] =>
		Array.from({ length: count }, (_, i) => ({
			channel: context.business.channelUuid,
			to: inWindow().phoneNumber,
			text: `msg ${i}`,
		}));
	const sentTexts = async () => (await sentMessages(context)).map((message) => message.text).sort();
	afterEach(async () => await admin(context.sandbox, 'DELETE', 'faults'));

	it('8 messages against a limit of 3 per second: each 429 waits as Retry-After says; exactly 8 sent, the node succeeds', async () => {
		await admin(context.sandbox, 'POST', 'faults', { endpoint: SEND, maxRequestsPerSecond: 3 });
		const result = await runConvo(context, send, { items: messages(8), node: retryOnFail });
		expect(result.errorOf('Convo')).toBeUndefined();
		expect(result.json.map((json) => json.status)).toEqual(Array(8).fill('enqueued'));
		expect(await sentTexts()).toEqual(
			messages(8)
				.map((item) => item.text)
				.sort(),
		);
	}, 60_000);

	it('a 5xx (the service did not act) is tried again for that item only; every message is sent once', async () => {
		await admin(context.sandbox, 'POST', 'faults', { endpoint: SEND, errorRate: 0.5, errorStatus: 503 });
		const result = await runConvo(context, send, { items: messages(4) });
		expect(result.errorOf('Convo')).toBeUndefined();
		expect(await sentTexts()).toEqual(['msg 0', 'msg 1', 'msg 2', 'msg 3']);
	});

	it("a connection cut after the request was written is not repeated by the node, and n8n's retry sends no accepted item again", async () => {
		// The request of msg 2 is cut once: the node cannot know whether it went out, so it fails;
		// n8n's Retry On Fail then runs the node again with all five items.
		let cutOnce = false;
		const proxy = await cuttingProxy(context.sandbox.baseUrl, (_index, body) => {
			if (cutOnce || !body.includes('"msg 2"')) return false;
			cutOnce = true;
			return true;
		});
		try {
			const credentials = credentialsOf(context.sandbox, context.business);
			credentials.convoApi = { ...credentials.convoApi, baseUrl: proxy.url };
			const result = await runConvo(context, send, { items: messages(5), credentials, node: retryOnFail });
			expect(result.errorOf('Convo')).toBeUndefined();
			expect(result.json.map((json) => json.status)).toEqual(Array(5).fill('enqueued'));
			// Each accepted message reached the service once: msg 0 and msg 1 were answered from memory.
			expect(await sentTexts()).toEqual(['msg 0', 'msg 1', 'msg 2', 'msg 3', 'msg 4']);
			const tries = (text: string) => proxy.received.filter((body) => body.includes(`"${text}"`)).length;
			expect(['msg 0', 'msg 1', 'msg 2', 'msg 3', 'msg 4'].map(tries)).toEqual([1, 1, 2, 1, 1]);
		} finally {
			await proxy.close();
		}
	});

	it('another execution sends the same items again (the memory is per execution)', async () => {
		await runConvo(context, send, { items: messages(2) });
		await runConvo(context, send, { items: messages(2) });
		expect(await sentTexts()).toEqual(['msg 0', 'msg 0', 'msg 1', 'msg 1']);
	});
});
