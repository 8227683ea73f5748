/** `convo-sandbox [--port N] [--host H] [--timeline STEPS]`: starts the sandbox and prints where everything is. */
import { DEFAULT_HOST, DEFAULT_PORT, startSandbox } from './index';
import type { Timeline } from './model';
import { parseTimeline } from './messageStatus';

function option(args: string[], name: string): string | undefined {
	const index = args.findIndex((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`));
	if (index === -1) return undefined;
	const arg = args[index];
	return arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : args[index + 1];
}

function portFrom(value: string | undefined, source: string): number | undefined {
	if (value === undefined || value === '') return undefined;
	const port = Number(value);
	if (!Number.isInteger(port) || port < 0 || port > 65535) {
		console.error(`${source}: "${value}" is not a port number (0 to 65535)`);
		process.exit(2);
	}
	return port;
}

function timelineFrom(value: string | undefined, source: string): Timeline | undefined {
	if (value === undefined || value === '') return undefined;
	try {
		return parseTimeline(value);
	} catch (error) {
		console.error(`${source}: ${(error as Error).message}`);
		process.exit(2);
	}
}

async function main(): Promise<void> {
	const args = process.argv.slice(2);
	if (args.includes('--help') || args.includes('-h')) {
		console.log(
			`Usage: convo-sandbox [--port N] [--host H] [--timeline STEPS] [--log]
  env SANDBOX_PORT sets the port (default ${DEFAULT_PORT}).
  --timeline (or env SANDBOX_TIMELINE): the default delivery timeline in ms after the send,
    e.g. sent=200,delivered=400,read=1000,failed=200 (default sent=2000,delivered=4000,read=10000,failed=2000).`,
		);
		return;
	}
	const port =
		portFrom(option(args, 'port'), '--port') ?? portFrom(process.env.SANDBOX_PORT, 'SANDBOX_PORT') ?? DEFAULT_PORT;
	const host = option(args, 'host') ?? DEFAULT_HOST;
	const timeline =
		timelineFrom(option(args, 'timeline'), '--timeline') ??
		timelineFrom(process.env.SANDBOX_TIMELINE, 'SANDBOX_TIMELINE');
	const sandbox = await startSandbox({ port, host, timeline, logger: args.includes('--log') });
	const timelineLine = timeline
		? `\n  timeline      sent ${timeline.sent} ms, delivered ${timeline.delivered} ms, ` +
			`read ${timeline.read} ms, failed ${timeline.failed} ms after the send`
		: '';
	console.log(`Convo sandbox running${timelineLine}
  base_url      ${sandbox.baseUrl}        (messaging API under ${sandbox.baseUrl}/v1, bearer token)
  external_url  ${sandbox.externalUrl}    (X-API-Key)
  fixture       ${sandbox.baseUrl}/__sandbox/fixture   (businesses, tokens, API keys, contacts, templates)
  openapi       ${sandbox.baseUrl}/openapi.json`);
	const stop = () => {
		sandbox.close().then(
			() => process.exit(0),
			() => process.exit(1),
		);
	};
	process.once('SIGINT', stop);
	process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
	console.error(`convo-sandbox could not start: ${error instanceof Error ? error.message : String(error)}`);
	process.exit(1);
});
