/* global Buffer */
// A stand-in for an OpenAI-compatible model, and a product feed, served on loopback for the
// examples that need them (the AI Agent example and the nightly reindex) in `npm run dev` and the
// end-to-end suite. Nothing leaves the machine.
//
// POST /v1/chat/completions answers like a model that uses tools: while the conversation has no
// tool result yet, it calls the first tool it was offered (a phone number found in the user's
// message fills every argument whose name says "phone"); once a tool answered, it answers in
// text built from that result (the contact's name and their latest inbound message). Streaming
// (`stream: true`) is answered as server-sent events. GET /v1/models lists one model.
// GET /feeds/products.ndjson serves examples/products-feed.ndjson.
// GET /__stub/requests lists what the model was asked (for checks); nothing else is kept.
//
//   node scripts/dev/stub-model.mjs [--port N]      prints "stub model at http://127.0.0.1:N/v1"
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';

const FEED = new URL('../../examples/products-feed.ndjson', import.meta.url);
export const STUB_MODEL_NAME = 'convo-stub-model';

const PHONE = /\+?\d[\d\s-]{6,}\d/;

/** The text of a chat message, whether content is a string or a list of parts. */
function textOf(message) {
	if (typeof message?.content === 'string') return message.content;
	if (Array.isArray(message?.content)) return message.content.map((part) => part.text ?? '').join('');
	return '';
}

/** Arguments for a tool: every string property named like a phone gets the phone from the question. */
function argumentsFor(tool, question) {
	const properties = tool.function?.parameters?.properties ?? {};
	const phone = PHONE.exec(question)?.[0]?.replace(/[\s-]/g, '') ?? '';
	const args = {};
	for (const [name, schema] of Object.entries(properties)) {
		if (/phone/i.test(name)) args[name] = phone;
		else if (schema?.type === 'number' || schema?.type === 'integer') args[name] = 10;
		else if (schema?.type === 'boolean') args[name] = true;
		else args[name] = '';
	}
	return args;
}

/** The final answer, from a tool result: who the contact is and what they wrote last. */
function answerFrom(toolText) {
	let data;
	try {
		data = JSON.parse(toolText);
	} catch {
		return `The tool answered: ${toolText.slice(0, 500)}`;
	}
	const found = Array.isArray(data) ? data[0] : data;
	const record = found?.response ?? found;
	const contact = record?.contact ?? {};
	const messages = record?.conversation?.messages ?? [];
	const inbound = messages.filter((message) => message.direction === 'inbound').at(-1);
	const name = [contact.first_name, contact.last_name].filter(Boolean).join(' ') || 'The contact';
	if (!inbound)
		return (
			`${name} has a conversation of ${record?.conversation?.message_count ?? 0} messages ` +
			'and no inbound message yet.'
		);
	return (
		`${name} wrote last: "${inbound.text}" (${inbound.created_at}). The conversation has ` +
		`${record.conversation.message_count} messages.`
	);
}

function completion(request) {
	const messages = request.messages ?? [];
	const lastUser = messages.findLastIndex((message) => message.role === 'user');
	const toolResult = messages.slice(lastUser + 1).findLast((message) => message.role === 'tool');
	const tools = request.tools ?? [];
	if (toolResult || tools.length === 0) {
		const content = toolResult ? answerFrom(textOf(toolResult)) : 'I have no tool to look that up.';
		return { message: { role: 'assistant', content }, finish_reason: 'stop' };
	}
	const tool = tools.find((candidate) => /convo|conversation/i.test(candidate.function?.name ?? '')) ?? tools[0];
	const call = {
		id: `call_${Date.now().toString(36)}`,
		type: 'function',
		function: { name: tool.function.name, arguments: JSON.stringify(argumentsFor(tool, textOf(messages[lastUser]))) },
	};
	return { message: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: 'tool_calls' };
}

function sendJson(res, status, body) {
	res.writeHead(status, { 'content-type': 'application/json' });
	res.end(JSON.stringify(body));
}

/** Server-sent events of one completion, as OpenAI streams it. */
function sendStream(res, id, created, choice) {
	res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
	const chunk = (delta, finish_reason = null) => {
		const event = { id, object: 'chat.completion.chunk', created, model: STUB_MODEL_NAME };
		return res.write(`data: ${JSON.stringify({ ...event, choices: [{ index: 0, delta, finish_reason }] })}\n\n`);
	};
	if (choice.message.tool_calls) {
		chunk({
			role: 'assistant',
			content: null,
			tool_calls: choice.message.tool_calls.map((call, index) => ({ index, ...call })),
		});
	} else {
		chunk({ role: 'assistant', content: choice.message.content });
	}
	chunk({}, choice.finish_reason);
	res.write('data: [DONE]\n\n');
	res.end();
}

async function readJson(req) {
	const chunks = [];
	for await (const chunk of req) chunks.push(chunk);
	return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
}

/** Starts the stub; resolves to { url (the server root), requests, close() }. */
export async function startStubModel({ port = 0, host = '127.0.0.1' } = {}) {
	const requests = [];
	let count = 0;
	const server = createServer((req, res) => {
		const path = new URL(req.url ?? '/', 'http://stub').pathname;
		(async () => {
			if (req.method === 'POST' && /\/chat\/completions$/.test(path)) {
				const body = await readJson(req);
				const choice = completion(body);
				requests.push({
					messages: body.messages,
					tools: (body.tools ?? []).map((tool) => tool.function?.name),
					answer: choice.message,
				});
				const id = `chatcmpl-stub-${++count}`;
				const created = Math.floor(Date.now() / 1000);
				if (body.stream) return sendStream(res, id, created, choice);
				return sendJson(res, 200, {
					id,
					object: 'chat.completion',
					created,
					model: STUB_MODEL_NAME,
					choices: [{ index: 0, ...choice, logprobs: null }],
					usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
				});
			}
			if (req.method === 'GET' && /\/models$/.test(path)) {
				return sendJson(res, 200, {
					object: 'list',
					data: [{ id: STUB_MODEL_NAME, object: 'model', created: 0, owned_by: 'convo-dev' }],
				});
			}
			if (req.method === 'GET' && path === '/feeds/products.ndjson') {
				res.writeHead(200, { 'content-type': 'application/x-ndjson' });
				return res.end(readFileSync(FEED));
			}
			if (req.method === 'GET' && path === '/__stub/requests') return sendJson(res, 200, requests);
			return sendJson(res, 404, { error: { message: `the stub does not serve ${req.method} ${path}` } });
		})().catch((error) => sendJson(res, 500, { error: { message: String(error) } }));
	});
	await new Promise((resolve) => server.listen(port, host, resolve));
	const url = `http://${host}:${server.address().port}`;
	return { url, requests, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
	const at = process.argv.indexOf('--port');
	const stub = await startStubModel({ port: at > 0 ? Number(process.argv[at + 1]) : 0 });
	console.log(`stub model at ${stub.url}/v1 (feed ${stub.url}/feeds/products.ndjson)`);
}
