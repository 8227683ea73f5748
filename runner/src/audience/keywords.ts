/**
 * Opt-out and opt-in keywords: an inbound message whose whole text is one of them puts its sender
 * on the suppression list or takes it off (tracking/attribution.ts receiveMessageCreated). A keyword inside
 * a longer message does not count ("please don't stop" is no opt-out); carriers' STOP rules
 * (CTIA, TCPA) match the same way. The text is compared here and dropped: never logged or stored.
 */
import type { RunnerConfig } from '../config';

/** English, Spanish, Portuguese, French, German, Italian, Dutch: what carriers and the big senders honour. */
const DEFAULT_OPTOUT = [
	'STOP',
	'STOPALL',
	'UNSUBSCRIBE',
	'CANCEL',
	'END',
	'QUIT',
	'OPTOUT',
	'OPT OUT',
	'REVOKE',
	'BAJA',
	'PARAR',
	'ALTO',
	'CANCELAR',
	'SAIR',
	'ARRET',
	'DESABONNER',
	'STOPP',
	'ABMELDEN',
	'BASTA',
	'DISISCRIVIMI',
	'AFMELDEN',
];
const DEFAULT_OPTIN = [
	'START',
	'UNSTOP',
	'SUBSCRIBE',
	'OPTIN',
	'OPT IN',
	'ALTA',
	'INICIAR',
	'VOLTAR',
	'ARRIVEE',
	'ANMELDEN',
];

/**
 * The form a message and a keyword are compared in: accents dropped (ARRÊT is ARRET), case folded,
 * punctuation and symbols gone (STOP! and "stop." are STOP), consecutive spaces one, ends trimmed.
 */
function keywordForm(text: string): string {
	return text
		.normalize('NFKD')
		.replace(/\p{M}/gu, '')
		.toUpperCase()
		.replace(/[\p{P}\p{S}]/gu, ' ')
		.replace(/\s+/g, ' ')
		.trim();
}

export interface Keywords {
	optOut: ReadonlySet<string>;
	optIn: ReadonlySet<string>;
}

const listed = (setting: string | undefined, defaults: string[]) =>
	new Set((setting === undefined ? defaults : setting.split(',')).map(keywordForm).filter(Boolean));

const cache = new WeakMap<RunnerConfig, Keywords>();

/** The keywords of this configuration (RUNNER_OPTOUT_KEYWORDS, RUNNER_OPTIN_KEYWORDS, else the defaults). */
export function keywordsOf(config: RunnerConfig): Keywords {
	let keywords = cache.get(config);
	if (!keywords) {
		keywords = {
			optOut: listed(config.RUNNER_OPTOUT_KEYWORDS, DEFAULT_OPTOUT),
			optIn: listed(config.RUNNER_OPTIN_KEYWORDS, DEFAULT_OPTIN),
		};
		cache.set(config, keywords);
	}
	return keywords;
}

/** What a message's whole text asks for, if it is a keyword. Very long texts are no keyword and are not normalised. */
export function keywordIntent(keywords: Keywords, text: unknown): 'opt_out' | 'opt_in' | undefined {
	if (typeof text !== 'string' || text.length > 64) return undefined;
	const form = keywordForm(text);
	if (keywords.optOut.has(form)) return 'opt_out';
	if (keywords.optIn.has(form)) return 'opt_in';
	return undefined;
}
