/** One change to one source file: [start, end) of its text replaced. */
export interface Mutant {
	/** What the change does, as a reader of the results needs it: `body.bot_status (line 12)`. */
	name: string;
	start: number;
	end: number;
	replacement: string;
}

export function applyMutant(text: string, mutant: Mutant): string {
	return `${text.slice(0, mutant.start)}${mutant.replacement}${text.slice(mutant.end)}`;
}
