/**
 * Service time: wall-clock time plus an offset that `POST /__sandbox/clock` moves forward, so
 * tests can cross the 24-hour customer-care window or the status progression without waiting.
 */
export class Clock {
	private offsetMs = 0;

	now(): number {
		return Date.now() + this.offsetMs;
	}

	iso(ms = this.now()): string {
		return new Date(ms).toISOString();
	}

	advance(ms: number): void {
		this.offsetMs += ms;
	}

	reset(): void {
		this.offsetMs = 0;
	}

	get offset(): number {
		return this.offsetMs;
	}
}
