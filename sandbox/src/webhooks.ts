/**
 * message_created webhooks (SPEC 6): registrations per business, one delivery attempt per event
 * and registration (retries are not shown), every attempt logged with its outcome. Registered
 * headers are sent but never logged: they often hold the receiver's secret.
 */
import { MESSAGE_CREATED } from 'convo-contract';
import { newUuid } from './ids';

interface WebhookRegistration {
	id: string;
	business: string;
	url: string;
	method: 'POST' | 'PUT';
	headers: Record<string, string>;
	createdAt: string;
}

interface DeliveryAttempt {
	id: string;
	webhookId: string;
	business: string;
	event: string;
	url: string;
	method: 'POST' | 'PUT';
	statusCode?: number;
	error?: string;
	body: unknown;
	at: string;
	durationMs?: number;
}

const DELIVERY_TIMEOUT_MS = 5000;

export class WebhookHub {
	private registrations: WebhookRegistration[] = [];
	private attempts: DeliveryAttempt[] = [];
	private pending = new Set<Promise<void>>();

	register(input: Omit<WebhookRegistration, 'id' | 'createdAt'>): WebhookRegistration {
		const registration = { ...input, id: newUuid(), createdAt: new Date().toISOString() };
		this.registrations.push(registration);
		return registration;
	}

	remove(id: string): boolean {
		const before = this.registrations.length;
		this.registrations = this.registrations.filter((registration) => registration.id !== id);
		return this.registrations.length !== before;
	}

	/** Registrations without their headers (secrets stay out of admin answers). */
	list(): Array<Omit<WebhookRegistration, 'headers'> & { headerNames: string[] }> {
		return this.registrations.map(({ headers, ...rest }) => ({ ...rest, headerNames: Object.keys(headers) }));
	}

	deliveries(): DeliveryAttempt[] {
		return [...this.attempts];
	}

	reset(): void {
		this.registrations = [];
		this.attempts = [];
	}

	/** Sends message_created to every registration of the business; does not wait for receivers. */
	emit(business: string, payload: Record<string, unknown>): void {
		const body = { event: MESSAGE_CREATED, payload };
		for (const registration of this.registrations.filter((candidate) => candidate.business === business)) {
			const job = this.deliver(registration, body).finally(() => this.pending.delete(job));
			this.pending.add(job);
		}
	}

	/** Waits for deliveries in flight (close, tests). */
	async drain(): Promise<void> {
		while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
	}

	private async deliver(registration: WebhookRegistration, body: { event: string; payload: unknown }): Promise<void> {
		const started = Date.now();
		const attempt: DeliveryAttempt = {
			id: newUuid(),
			webhookId: registration.id,
			business: registration.business,
			event: body.event,
			url: registration.url,
			method: registration.method,
			body,
			at: new Date(started).toISOString(),
		};
		try {
			const response = await fetch(registration.url, {
				method: registration.method,
				headers: { ...registration.headers, 'content-type': 'application/json' },
				body: JSON.stringify(body),
				signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
			});
			attempt.statusCode = response.status;
			await response.arrayBuffer().catch(() => undefined);
		} catch (error) {
			attempt.error = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
		}
		attempt.durationMs = Date.now() - started;
		this.attempts.push(attempt);
	}
}
