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
