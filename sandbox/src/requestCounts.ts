/**
 * How many requests each endpoint of the contract received since start or reset, under the
 * same "METHOD /full/route/template" keys faults use, so tests and benchmarks count calls.
 * Every request counts, refused ones included: it is what the service received.
 */
import { OPERATION_KEYS } from 'convo-contract';
import { endpointOf } from './endpoints';

export class RequestCounts {
	private counts = new Map<string, number>();

	constructor() {
		this.reset();
	}

	record(endpoint: string): void {
		this.counts.set(endpoint, (this.counts.get(endpoint) ?? 0) + 1);
	}

	reset(): void {
		this.counts = new Map(OPERATION_KEYS.map((key) => [endpointOf(key), 0]));
	}

	/** Every endpoint, those never called with 0, in the contract's order. */
	toJSON(): Record<string, number> {
		return Object.fromEntries(this.counts);
	}
}
