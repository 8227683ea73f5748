/**
 * Sends by their arrival on the wire: tcpdump on loopback keeps each packet that starts a send
 * request to a port, and the kernel stamps it as it passes, whatever the receiving process is doing.
 * The tap's and the sandbox's stamps are taken when their event loops read the request, so on a
 * loaded machine a process that waits for a core stamps a burst of arrivals together; the kernel's
 * stamp is when the request reached the service's host.
 *
 * tcpdump needs CAP_NET_RAW (root here); without it, or without tcpdump, `startWireCapture` says why
 * and the benchmark reports the figure as not measured.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The start of a send request's first line (its query and protocol follow). */
const SEND_LINE = Buffer.from('POST /api/external/v2/send-template');
/** Bytes kept of each packet: the headers and the request line. */
const SNAPSHOT_BYTES = 256;
/** tcpdump's buffer (KiB): 1,000 requests a second must not overflow it while tcpdump waits for a core. */
const BUFFER_KIB = 65_536;
/** How often, and at most how long, `stop` looks for the capture file to stop growing. */
const STOP_POLL_MS = 300;
const STOP_WAIT_MS = 10_000;

export interface WireArrivals {
	/** Each send request's arrival, ms since the epoch, in order. */
	times: number[];
	/** Packets the kernel dropped before tcpdump read them: if any, `times` misses sends. */
	dropped: number;
}

export interface WireCapture {
	stop(): Promise<WireArrivals>;
}

/** Starts capturing send requests to `port` on loopback; a capture, or why there is none. */
export async function startWireCapture(port: number): Promise<WireCapture | { unavailable: string }> {
	const folder = mkdtempSync(join(tmpdir(), 'convo-wire-'));
	const file = join(folder, 'sends.pcap');
	// Only TCP segments to the port whose payload begins with "POST".
	const filter = `tcp dst port ${port} and tcp[((tcp[12:1] & 0xf0) >> 2):4] = 0x504f5354`;
	const child = spawn(
		'tcpdump',
		// --immediate-mode: each packet handed over as it comes (not a block at a time, whose last one
		// would still be in the kernel when tcpdump stops); -U: each written as it is read.
		[
			'-i',
			'lo',
			'-n',
			'--immediate-mode',
			'-U',
			'-s',
			String(SNAPSHOT_BYTES),
			'-B',
			String(BUFFER_KIB),
			'-w',
			file,
			filter,
		],
		{ stdio: ['ignore', 'ignore', 'pipe'] },
	);
	let stderr = '';
	child.stderr.on('data', (chunk) => (stderr += String(chunk)));
	const listening = await Promise.race([
		new Promise<boolean>((resolve) => child.stderr.on('data', () => stderr.includes('listening on') && resolve(true))),
		once(child, 'error').then(() => false),
		once(child, 'exit').then(() => false),
	]);
	if (!listening) {
		rmSync(folder, { recursive: true, force: true });
		return { unavailable: `tcpdump did not start: ${stderr.trim().split('\n').at(-1) || 'not installed'}` };
	}
	return {
		async stop() {
			// The last sends are written once tcpdump has a core: stop when the file has stopped growing.
			for (let size = -1, waited = 0; waited < STOP_WAIT_MS; waited += STOP_POLL_MS) {
				const now = statSync(file, { throwIfNoEntry: false })?.size ?? 0;
				if (now === size) break;
				size = now;
				await new Promise((resolve) => setTimeout(resolve, STOP_POLL_MS));
			}
			// A tcpdump that ended on its own (killed, out of disk) has nothing left to wait for.
			if (child.exitCode === null && child.signalCode === null) {
				const exited = once(child, 'exit');
				child.kill('SIGINT');
				await exited;
			}
			try {
				// "N packets dropped by kernel", printed as tcpdump ends.
				const dropped = Number(/(\d+) packets? dropped by kernel/.exec(stderr)?.[1] ?? 0);
				return { times: sendTimes(readFileSync(file)), dropped };
			} finally {
				rmSync(folder, { recursive: true, force: true });
			}
		},
	};
}

/** The arrival of every send request line in a pcap file of Ethernet frames (Linux loopback), ms. */
function sendTimes(pcap: Buffer): number[] {
	const magic = pcap.readUInt32LE(0);
	if (magic !== 0xa1b2c3d4 && magic !== 0xa1b23c4d) throw new Error('not a little-endian pcap file');
	const fractionMs = magic === 0xa1b23c4d ? 1e-6 : 1e-3;
	const linkType = pcap.readUInt32LE(20);
	if (linkType !== 1) throw new Error(`pcap link type ${linkType}: expected Ethernet (1), as Linux gives loopback`);
	const times: number[] = [];
	for (let at = 24; at + 16 <= pcap.length; ) {
		const ms = pcap.readUInt32LE(at) * 1000 + pcap.readUInt32LE(at + 4) * fractionMs;
		const kept = pcap.readUInt32LE(at + 8);
		const frame = pcap.subarray(at + 16, at + 16 + kept);
		at += 16 + kept;
		const ip = frame.subarray(14);
		const tcp = ip.subarray((ip[0] & 0x0f) * 4);
		const payload = tcp.subarray((tcp[12] >> 4) * 4);
		for (let i = payload.indexOf(SEND_LINE); i !== -1; i = payload.indexOf(SEND_LINE, i + SEND_LINE.length))
			times.push(ms);
	}
	return times.sort((a, b) => a - b);
}
