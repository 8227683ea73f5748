// A tap in front of the sandbox: a process of its own that passes every byte both ways between the
// runner and the sandbox and notes when each send request's first line arrived. The sandbox stamps
// arrivals in its own event loop, which pauses longer as its log grows (tens of ms at 200,000
// messages); this process holds only the times (8 bytes a send), so its pauses stay short and its
// stamps are arrivals timed outside the receiving process.
//
//   node bench/lib/tap.mjs <target port> <file>   (forked: answers { port } once listening;
//   on the message 'dump' writes the times, float64 ms, to <file> and answers { count })
import { Buffer } from 'node:buffer';
import { writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';

const [targetPort, file] = process.argv.slice(2);
// The line goes on with the query (from, template) and the protocol.
const SEND_LINE = Buffer.from('POST /api/external/v2/send-template');

let times = new Float64Array(1 << 16);
let count = 0;
function note(at) {
	if (count === times.length) {
		const larger = new Float64Array(times.length * 2);
		larger.set(times);
		times = larger;
	}
	times[count++] = at;
}

const server = createServer((client) => {
	const upstream = connect(Number(targetPort), '127.0.0.1');
	client.on('data', (chunk) => {
		const at = Date.now();
		for (let i = chunk.indexOf(SEND_LINE); i !== -1; i = chunk.indexOf(SEND_LINE, i + SEND_LINE.length)) note(at);
	});
	client.pipe(upstream);
	upstream.pipe(client);
	const end = () => {
		client.destroy();
		upstream.destroy();
	};
	for (const socket of [client, upstream]) {
		socket.on('error', end);
		socket.on('close', end);
	}
});
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', (message) => {
	if (message !== 'dump') return;
	writeFileSync(file, new Uint8Array(times.buffer, 0, count * 8));
	process.send({ count });
});
process.on('disconnect', () => process.exit(0));
