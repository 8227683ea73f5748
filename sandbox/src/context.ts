import type { Clock } from './clock';
import type { Delivery } from './delivery';
import type { Faults } from './faults';
import type { RequestCounts } from './requestCounts';
import type { SendRefusals } from './sendRefusals';
import type { Store } from './store';
import type { Links } from './views';
import type { WebhookHub } from './webhooks';

/**
 * Everything a route needs: state, service time, webhooks, delivery
 * settings, faults, the sends the channel refuses, request counts and the public addresses.
 */
export interface SandboxContext {
	store: Store;
	clock: Clock;
	webhooks: WebhookHub;
	delivery: Delivery;
	faults: Faults;
	refusals: SendRefusals;
	requests: RequestCounts;
	links: Links & { baseUrl: string; externalUrl: string };
}
