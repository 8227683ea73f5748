/** The sandbox's programmatic API: start it on a port (0 = any free one), read the fixture, close. */
import type { AddressInfo } from 'node:net';

import { buildApp } from './app';
import { Clock } from './clock';
import type { SandboxContext } from './context';
import { Delivery } from './delivery';
import { Faults } from './faults';
import { SendRefusals } from './sendRefusals';
import { describeFixture, type Fixture } from './fixture';
import type { Timeline } from './model';
import { RequestCounts } from './requestCounts';
import { seedFixture } from './seed';
import { DEFAULT_TIMELINE, timelineOf } from './messageStatus';
import { Store } from './store';
import { WebhookHub } from './webhooks';

export interface SandboxOptions {
	/** 0 = any free port. Default 4010. */
	port?: number;
	/** Default 127.0.0.1. */
	host?: string;
	logger?: boolean;
	/**
	 * The default timeline's steps in ms after the send (the rest keep 2 s sent, 4 s delivered, 10 s
	 * read, 2 s failed): a short one lets tests see messages read without waiting 10 s.
	 */
	timeline?: Partial<Timeline>;
}

export interface RunningSandbox {
	/** Server root ({base_url}); the messaging API is under /v1. */
	baseUrl: string;
	/** `${baseUrl}/api/external/v2` ({external_url}). */
	externalUrl: string;
	/** The same JSON as GET /__sandbox/fixture. */
	fixture: Fixture;
	close(): Promise<void>;
}

export const DEFAULT_PORT = 4010;
export const DEFAULT_HOST = '127.0.0.1';

/**
 * Fresh state at service time zero; the links are filled in once the server listens. Throws on a
 * timeline that breaks a rule.
 */
export function createSandboxContext(options: Pick<SandboxOptions, 'timeline'> = {}): SandboxContext {
	const clock = new Clock();
	const base = {
		clock,
		store: new Store(clock, seedFixture, options.timeline ? timelineOf(options.timeline) : DEFAULT_TIMELINE),
		webhooks: new WebhookHub(),
		faults: new Faults(),
		refusals: new SendRefusals(clock),
		requests: new RequestCounts(),
		links: { baseUrl: '', externalUrl: '', dashboardUrl: '' },
	};
	return { ...base, delivery: new Delivery(base) };
}

export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
	const context = createSandboxContext(options);
	const app = buildApp(context, { logger: options.logger });
	const host = options.host ?? DEFAULT_HOST;
	const wanted = options.port ?? DEFAULT_PORT;
	try {
		await app.listen({ port: wanted, host });
	} catch (error) {
		await app.close();
		if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
		throw new Error(
			`port ${wanted} on ${host} is already in use (another sandbox?): stop that process, ` +
				'or pick another port with --port N or SANDBOX_PORT=N (0 takes any free port)',
		);
	}
	const { port } = app.server.address() as AddressInfo;
	const baseUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
	context.links.baseUrl = baseUrl;
	context.links.externalUrl = `${baseUrl}/api/external/v2`;
	context.links.dashboardUrl = `${baseUrl}/dashboard`;
	return {
		baseUrl,
		externalUrl: context.links.externalUrl,
		fixture: describeFixture(baseUrl, context.links.externalUrl),
		close: async () => {
			context.delivery.stop();
			await context.webhooks.drain();
			await app.close();
		},
	};
}
