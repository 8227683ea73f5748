/**
 * Request bodies the routes read as a stream (a campaign's CSV/NDJSON upload, a suppression
 * import): one way of reading them, so every upload gets the same answers. Past
 * RUNNER_UPLOAD_LIMIT_BYTES 413; silent for RUNNER_UPLOAD_IDLE_TIMEOUT, or slower than
 * RUNNER_UPLOAD_DEADLINE plus a second per RUNNER_UPLOAD_MIN_BYTES_PER_SECOND bytes, 408 and the
 * connection closed; any other refusal only once the client has sent everything.
 */
import type { Readable, Transform as TransformType } from 'node:stream';
import { Transform } from 'node:stream';

import type { FastifyReply, FastifyRequest } from 'fastify';

import type { RunnerConfig } from '../config';
import { refuseBinary } from '../core/campaigns';
import { UserError } from '../errors';
import { LimitError } from '../limits';

export class PayloadTooLarge extends UserError {}

/** setTimeout's longest delay; a longer one would fire at once. */
const LONGEST_TIMER_MS = 2_147_483_647;
/** How often the deadline is looked at while the runner holds an upload paused. */
const PAUSED_RECHECK_MS = 1000;

/** The watch on one upload: `exceeded` once past the size limit, `stalled` (the 408) once the client was too slow. */
type UploadWatch = TransformType & { exceeded: boolean; stalled?: LimitError };

/**
 * Reads the rest of a request body and throws it away; stops early when the upload's watch finds the client too slow.
 */
async function drain(body: Readable | undefined, watch?: UploadWatch): Promise<void> {
	if (!body || typeof body.resume !== 'function' || body.readableEnded || body.destroyed || watch?.stalled) return;
	await new Promise<void>((resolve) => {
		body
			.on('end', resolve)
			.on('close', resolve)
			.on('error', () => resolve());
		watch?.once('stalled', resolve);
		// A pipe into a parser that stopped reading would pause it again.
		body.unpipe();
		body.resume();
	});
}

/**
 * Counts the bytes of an upload and stops it past the limit (`exceeded` then says why it stopped),
 * or when the client is too slow (`stalled`): silent for RUNNER_UPLOAD_IDLE_TIMEOUT, or still
 * sending once RUNNER_UPLOAD_DEADLINE plus a second per RUNNER_UPLOAD_MIN_BYTES_PER_SECOND bytes
 * it sent have passed. A client that stalls or trickles would otherwise hold its connection and the
 * half-read upload forever. The client is watched on the request itself, so it is also ended while
 * the rest of a refused upload is read and dropped. Time while the request is paused (the parser
 * waiting for rows to be written) is not the client's. `stopped`: what the 408 adds about the work.
 */
function watchUpload(source: Readable, config: RunnerConfig, stopped: string): UploadWatch {
	const limit = config.RUNNER_UPLOAD_LIMIT_BYTES;
	const idleMs = config.RUNNER_UPLOAD_IDLE_TIMEOUT;
	const deadlineMs = config.RUNNER_UPLOAD_DEADLINE;
	const minRate = config.RUNNER_UPLOAD_MIN_BYTES_PER_SECOND;
	let counted = 0;
	let received = 0;
	const started = Date.now();
	let pausedMs = 0;
	let pausedAt: number | undefined;
	const clientMs = () => Date.now() - started - pausedMs - (pausedAt === undefined ? 0 : Date.now() - pausedAt);
	const allowedMs = () => deadlineMs + (received * 1000) / minRate;
	let idleTimer: NodeJS.Timeout | undefined;
	let deadlineTimer: NodeJS.Timeout | undefined;
	const stopTimers = () => {
		clearTimeout(idleTimer);
		clearTimeout(deadlineTimer);
	};
	const stop = (error: LimitError) => {
		if (watch.stalled) return;
		watch.stalled = error;
		stopTimers();
		// Reading: the parser fails and nothing more is taken. Already refused and being drained: the drain stops.
		if (!watch.destroyed) watch.destroy(error);
		watch.emit('stalled');
	};
	const watchIdle = () => {
		clearTimeout(idleTimer);
		idleTimer = setTimeout(() => {
			if (source.isPaused()) return watchIdle();
			stop(
				new LimitError(408, `the upload sent nothing for ${idleMs / 1000} s (RUNNER_UPLOAD_IDLE_TIMEOUT); ${stopped}`),
			);
		}, idleMs);
	};
	const watchDeadline = () => {
		const left = allowedMs() - clientMs();
		// While paused the client's time stands still: looked at again a second later, not in a busy loop.
		if (left > 0 || pausedAt !== undefined) {
			deadlineTimer = setTimeout(
				watchDeadline,
				Math.min(Math.max(Math.ceil(left), pausedAt === undefined ? 1 : PAUSED_RECHECK_MS), LONGEST_TIMER_MS),
			);
			return;
		}
		stop(
			new LimitError(
				408,
				`the upload was too slow: it may take ${deadlineMs / 1000} s (RUNNER_UPLOAD_DEADLINE) ` +
					`plus 1 s for every ${minRate} bytes it sends (RUNNER_UPLOAD_MIN_BYTES_PER_SECOND), ` +
					`and sent ${received} bytes in ${Math.round(clientMs() / 1000)} s; ${stopped}`,
			),
		);
	};
	const watch = new Transform({
		transform(chunk: Buffer, _encoding, done) {
			counted += chunk.length;
			if (counted > limit) {
				watch.exceeded = true;
				done(new PayloadTooLarge(`the upload is larger than ${limit} bytes`));
			} else done(null, chunk);
		},
	}) as UploadWatch;
	watch.exceeded = false;
	// Added before the route pipes the request (the same tick), so no chunk is missed by either.
	source.on('data', (chunk: Buffer) => {
		received += chunk.length;
		watchIdle();
	});
	source.on('pause', () => (pausedAt ??= Date.now()));
	source.on('resume', () => {
		if (pausedAt !== undefined) pausedMs += Date.now() - pausedAt;
		pausedAt = undefined;
	});
	source.on('end', stopTimers).on('close', stopTimers);
	watchIdle();
	watchDeadline();
	return watch;
}

/**
 * Reads the request's body through `work` (given the body's bytes, a binary one refused) under the
 * upload's limits. When `work` fails, the answer waits until the client has sent everything (a
 * reply mid-upload resets its connection), unless the client was too slow: then 408 now and the
 * connection closed, nothing more is read. `stopped`: what a 408 says happened to the work.
 */
export async function receiveUpload<T>(
	request: FastifyRequest,
	reply: FastifyReply,
	config: RunnerConfig,
	stopped: string,
	work: (body: Readable) => Promise<T>,
): Promise<T> {
	const limit = config.RUNNER_UPLOAD_LIMIT_BYTES;
	const source = request.body as Readable;
	const watch = watchUpload(source, config, stopped);
	try {
		const declared = Number(request.headers['content-length'] ?? 0);
		if (declared > limit)
			throw new PayloadTooLarge(
				`the upload is ${declared} bytes; at most ${limit} are accepted (RUNNER_UPLOAD_LIMIT_BYTES)`,
			);
		return await work(refuseBinary(source.pipe(watch), 'the upload'));
	} catch (error) {
		await drain(source, watch);
		if (watch.stalled) {
			reply.header('connection', 'close');
			throw watch.stalled;
		}
		if (watch.exceeded)
			throw new PayloadTooLarge(`the upload is larger than ${limit} bytes (RUNNER_UPLOAD_LIMIT_BYTES)`);
		throw error;
	}
}
