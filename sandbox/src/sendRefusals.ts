/**
 * What the channel refuses a template send for, beyond a malformed request (SPEC B8: "400
 * validation or blocked send"): a template paused or disabled for its quality, a sending number
 * that may not send now, and the business's messaging limit (distinct customers a business may
 * start conversations with in a rolling 24 hours). Set through the admin API; all of it cleared by
 * a reset. The answer is 400 with the reason in its message, the field being the query parameter
 * that names what is refused (`template_id`, `from_phone_number`) or `phone` for the limit.
 */
import type { Clock } from './clock';
import { badRequest } from './httpError';

export type TemplateQuality = 'paused' | 'disabled';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Refused sends kept for `GET /__sandbox/refusals` (the latest ones): what tests count. */
const REFUSED_KEPT = 10_000;

/** A refused send as the log keeps it: when (service time), its template and number, the field refused. */
interface RefusedSend {
	at: string;
	template_id: string;
	from: string;
	field: string;
}

export class SendRefusals {
	private templates = new Map<string, TemplateQuality>();
	private numbers = new Set<string>();
	private dailyLimits = new Map<string, number>();
	/**
	 * Per business with a limit (counting starts when it is set): each customer's first template send
	 * within the last 24 hours, by service time, in the order they were first sent to.
	 */
	private started = new Map<string, Map<string, number>>();
	private refused: RefusedSend[] = [];

	constructor(private readonly clock: Clock) {}

	setTemplate(templateId: string, quality: TemplateQuality | 'active'): void {
		if (quality === 'active') this.templates.delete(templateId);
		else this.templates.set(templateId, quality);
	}

	setNumber(digits: string, state: 'restricted' | 'active'): void {
		if (state === 'active') this.numbers.delete(digits);
		else this.numbers.add(digits);
	}

	/** `null`: no limit (the channel's "unlimited" tier), and its count forgotten. */
	setDailyLimit(businessId: string, limit: number | null): void {
		if (limit === null) {
			this.dailyLimits.delete(businessId);
			this.started.delete(businessId);
		} else this.dailyLimits.set(businessId, limit);
	}

	reset(): void {
		this.templates.clear();
		this.numbers.clear();
		this.dailyLimits.clear();
		this.started.clear();
		this.refused = [];
	}

	/**
	 * Throws the 400 the service answers when this send is refused; otherwise counts the customer
	 * against the business's limit (once per 24 hours: a customer already messaged draws nothing more).
	 */
	admit(send: { businessId: string; template: { id: string; name: string }; from: string; phone: string }): void {
		const refuse = (message: string, field: string) => {
			this.refused.push({
				at: new Date(this.clock.now()).toISOString(),
				template_id: send.template.id,
				from: send.from,
				field,
			});
			if (this.refused.length > REFUSED_KEPT) this.refused.splice(0, this.refused.length - REFUSED_KEPT);
			return badRequest(message, field);
		};
		const quality = this.templates.get(send.template.id);
		if (quality)
			throw refuse(
				`blocked send: template ${send.template.name} is ${quality} for its quality and cannot be sent now`,
				'template_id',
			);
		if (this.numbers.has(send.from))
			throw refuse(`blocked send: phone number ${send.from} cannot send messages now`, 'from_phone_number');
		const limit = this.dailyLimits.get(send.businessId);
		if (limit === undefined) return;
		const now = this.clock.now();
		const started = this.startedBy(send.businessId, now);
		if (!started.has(send.phone) && started.size >= limit)
			throw refuse(`blocked send: the business reached its messaging limit of ${limit} customers in 24 hours`, 'phone');
		if (!started.has(send.phone)) started.set(send.phone, now);
	}

	view() {
		return {
			templates: Object.fromEntries(this.templates),
			numbers: [...this.numbers],
			dailyLimits: Object.fromEntries(
				[...this.dailyLimits].map(([business, limit]) => [
					business,
					{ limit, used: this.startedBy(business, this.clock.now()).size },
				]),
			),
			refused: this.refused,
		};
	}

	/** The business's customers first messaged within the last 24 hours: older ones, at the front, dropped. */
	private startedBy(businessId: string, now: number): Map<string, number> {
		let started = this.started.get(businessId);
		if (!started) this.started.set(businessId, (started = new Map()));
		for (const [phone, at] of started) {
			if (at > now - DAY_MS) break;
			started.delete(phone);
		}
		return started;
	}
}
