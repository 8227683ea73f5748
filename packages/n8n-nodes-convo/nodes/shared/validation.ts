import type { z } from 'zod/v4';

/** One broken rule: the field it is about and a sentence that names the field and the rule. */
export interface ContractIssue {
	/** Dotted path of the field, e.g. "metadata" or "buttons[0].index"; "" for the whole value. */
	field: string;
	/** Where the field lives in the request. */
	location: RequestLocation;
	/** e.g. "metadata has 11 pairs; at most 10". */
	message: string;
}

export type RequestLocation = 'path' | 'query' | 'body' | 'response' | 'event';

/** Input that breaks the contract. Raised before anything is sent, and by the sandbox to answer 400. */
export class ContractError extends Error {
	readonly issues: ContractIssue[];

	constructor(issues: ContractIssue[]) {
		super(issues.map((issue) => issue.message).join('; '));
		this.name = 'ContractError';
		this.issues = issues;
	}

	/** The first field named, for error bodies that carry one field. */
	get field(): string {
		return this.issues[0]?.field ?? '';
	}
}

function fieldPath(path: ReadonlyArray<PropertyKey>): string {
	let out = '';
	for (const key of path) {
		if (typeof key === 'number') out += `[${key}]`;
		else out += out === '' ? String(key) : `.${String(key)}`;
	}
	return out;
}

function describeValue(value: unknown): string {
	if (value === null) return 'null';
	if (Array.isArray(value)) return 'an array';
	return typeof value === 'object' ? 'an object' : article(typeof value);
}

function article(noun: string): string {
	return /^[aeiou]/.test(noun) ? `an ${noun}` : `a ${noun}`;
}

function sizeWord(origin: string): string {
	if (origin === 'string') return 'characters';
	if (origin === 'array' || origin === 'set') return 'items';
	return '';
}

/** Turns one zod issue into a sentence that starts with the field's name. */
function sentence(issue: z.core.$ZodIssue, name: string, location: RequestLocation): string {
	// A rule may say what kind of field it names (`params.noun`), for fields whose names are bare numbers.
	const noun = issue.code === 'custom' && typeof issue.params?.noun === 'string' ? `${issue.params.noun} ` : '';
	const subject = name === '' ? location : `${noun}${name}`;
	if ((issue.code === 'invalid_type' || issue.code === 'invalid_value') && issue.input === undefined) {
		return `${subject} is required`;
	}
	// Messages written in the schema (custom rules, explicit `error`) already name the rule.
	const written = issue.message && !issue.message.startsWith('Invalid') && !issue.message.startsWith('Too ');
	switch (issue.code) {
		case 'invalid_type':
			return (
				`${subject} must be ${article(issue.expected === 'int' ? 'integer' : issue.expected)}, ` +
				`not ${describeValue(issue.input)}`
			);
		case 'too_big': {
			if (written) return `${subject} ${issue.message}`;
			const unit = sizeWord(issue.origin);
			if (unit) return `${subject} has more than ${String(issue.maximum)} ${unit}; at most ${String(issue.maximum)}`;
			return `${subject} is ${String(issue.input)}; at most ${String(issue.maximum)}`;
		}
		case 'too_small': {
			if (written) return `${subject} ${issue.message}`;
			const unit = sizeWord(issue.origin);
			if (issue.origin === 'string' && issue.minimum === 1) return `${subject} must not be empty`;
			if (unit) return `${subject} has fewer than ${String(issue.minimum)} ${unit}; at least ${String(issue.minimum)}`;
			return `${subject} is ${String(issue.input)}; at least ${String(issue.minimum)}`;
		}
		case 'invalid_format':
			if (written) return `${subject} ${issue.message}`;
			return `${subject} must be a valid ${issue.format === 'guid' ? 'UUID' : issue.format}`;
		case 'invalid_value':
			return `${subject} must be one of: ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
		case 'unrecognized_keys':
			return `${subject} has unknown field${issue.keys.length > 1 ? 's' : ''}: ${issue.keys.join(', ')}`;
		case 'invalid_key':
			// A record key broke its rule; the inner issue carries the sentence.
			return `${subject} ${issue.issues[0]?.message ?? 'has an invalid key'}`;
		case 'invalid_union':
			return `${subject} ${written ? issue.message : 'does not match any allowed shape'}`;
		default:
			return `${subject} ${issue.message}`;
	}
}

export function toContractIssues(error: z.core.$ZodError, location: RequestLocation): ContractIssue[] {
	return error.issues.map((issue) => {
		// A bad record key is reported on the record; the key is already in the sentence.
		const field = fieldPath(issue.code === 'invalid_key' ? issue.path.slice(0, -1) : issue.path);
		return { field, location, message: sentence(issue, field, location) };
	});
}

/** Parses with `schema`; on failure throws a ContractError whose messages name each field. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, location: RequestLocation): z.output<S> {
	const result = schema.safeParse(value, { reportInput: true });
	if (!result.success) throw new ContractError(toContractIssues(result.error, location));
	return result.data;
}
