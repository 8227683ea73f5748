import type { Clock } from './clock';
import type { Faults } from './faults';
import type { RequestCounts } from './requestCounts';
import type { Store } from './store';
import type { Links } from './views';
import type { WebhookHub } from './webhooks';

/** Everything a route needs: state, service time, webhooks, faults, request counts and the public addresses. */
export interface SandboxContext {
	store: Store;
	clock: Clock;
	webhooks: WebhookHub;
	faults: Faults;
	requests: RequestCounts;
	links: Links & { baseUrl: string; externalUrl: string };
}
