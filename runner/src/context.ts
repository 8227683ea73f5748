/** What every part of the runner works with: one Redis, its keys, the ledger, the queues, the service. */
import type { RunnerConfig } from './config';
import type { Keys } from './keys';
import type { Ledger } from './ledger';
import type { Logger } from './log';
import type { Queues } from './queues';
import type { RedisConnection } from './redis';
import type { ConvoService } from './service';

export interface RunnerContext {
	config: RunnerConfig;
	redis: RedisConnection;
	keys: Keys;
	ledger: Ledger;
	queues: Queues;
	log: Logger;
	/** Present where the runner talks to the service (workers, reconcile). */
	service?: ConvoService;
}

/** An operator's mistake or an impossible request: the CLI prints the message, exits 1, no stack. */
export class UserError extends Error {}

/** A setting that breaks its rule; `field` names it as the client does (`--source`, `source`). */
export class FieldError extends UserError {
	constructor(
		message: string,
		readonly field: string,
	) {
		super(message);
	}
}

/** A campaign, run or schedule that does not exist (the API answers 404). */
export class NotFoundError extends UserError {}

/** A request that conflicts with one in progress (the API answers 409). */
export class ConflictError extends UserError {}
