/**
 * The runner's errors a client turns into an answer. A leaf module, so any layer may throw them and
 * every client (HTTP, CLI) may catch them without reaching past its door.
 */

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
