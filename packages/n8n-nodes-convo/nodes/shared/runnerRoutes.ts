/**
 * The routes of convo-runner's control API that the node pack calls, and the bounds both sides
 * check: written once, so the runner registers exactly what the Convo node, the Convo Runner
 * Trigger and the runner credential ask for (test/runner/apiContract.test.ts proves they agree).
 * No zod here: the runner credential reads these constants without pulling in schemas.
 */

export type RunnerMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface RunnerRoute {
	readonly method: RunnerMethod;
	/** Fastify's form: `:id` stands for a runner id (runnerPath fills it). */
	readonly path: string;
}

export const RUNNER_ROUTES = {
	listCampaigns: { method: 'GET', path: '/api/campaigns' },
	createCampaign: { method: 'POST', path: '/api/campaigns' },
	getCampaign: { method: 'GET', path: '/api/campaigns/:id' },
	addRecipients: { method: 'POST', path: '/api/campaigns/:id/recipients' },
	startCampaign: { method: 'POST', path: '/api/campaigns/:id/start' },
	pauseCampaign: { method: 'POST', path: '/api/campaigns/:id/pause' },
	resumeCampaign: { method: 'POST', path: '/api/campaigns/:id/resume' },
	cancelCampaign: { method: 'POST', path: '/api/campaigns/:id/cancel' },
	deleteCampaign: { method: 'DELETE', path: '/api/campaigns/:id' },
	setCampaignRate: { method: 'PUT', path: '/api/campaigns/:id/rate' },
	campaignReport: { method: 'GET', path: '/api/campaigns/:id/report' },
	startReindex: { method: 'POST', path: '/api/reindex' },
	listReindexRuns: { method: 'GET', path: '/api/reindex' },
	getReindexRun: { method: 'GET', path: '/api/reindex/:id' },
	createWebhook: { method: 'POST', path: '/api/webhooks' },
	getWebhook: { method: 'GET', path: '/api/webhooks/:id' },
	removeWebhook: { method: 'DELETE', path: '/api/webhooks/:id' },
	recordReceipt: { method: 'POST', path: '/api/webhooks/:id/receipts' },
	addSuppression: { method: 'POST', path: '/api/suppressions' },
	listSuppressions: { method: 'GET', path: '/api/suppressions' },
	/** `:id` is the phone, digits with country code. */
	checkSuppression: { method: 'GET', path: '/api/suppressions/:id' },
	removeSuppression: { method: 'DELETE', path: '/api/suppressions/:id' },
	getBudget: { method: 'GET', path: '/api/budget' },
	setBudget: { method: 'PUT', path: '/api/budget' },
	clearBudget: { method: 'DELETE', path: '/api/budget' },
	countBudgetCustomer: { method: 'POST', path: '/api/budget/customers' },
} as const satisfies Record<string, RunnerRoute>;

export type RunnerRouteName = keyof typeof RUNNER_ROUTES;

/** The path of a route for one id (encoded, so an odd id cannot change the route). */
export function runnerPath(route: RunnerRoute, id?: string): string {
	if (!route.path.includes(':id')) return route.path;
	if (id === undefined) throw new Error(`${route.method} ${route.path} needs an id`);
	return route.path.replace(':id', encodeURIComponent(id));
}

/** Ids the runner gives campaigns, reindex runs, schedules and webhooks (not UUIDs). */
export const RUNNER_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** RUNNER_ID_PATTERN in words, for error messages. */
export const RUNNER_ID_RULE = '1 to 64 letters, digits, "_" or "-"';

/** Sends (campaigns) or upserts (reindex runs) per second: every client and the runner check these bounds. */
export const RATE_BOUNDS = { min: 1, max: 1000 } as const;

/** A reindex run's rate when none is given. */
export const DEFAULT_REINDEX_RATE = 100;

/** At most this many rows per request when a client sends recipients in chunks. */
export const RECIPIENTS_PER_CHUNK = 1000;
