/**
 * Opt-out and opt-in keywords (#23, audience/keywords.ts): a message counts when its whole text is
 * a keyword, after trimming, case folding and dropping accents and punctuation; the lists come from
 * RUNNER_OPTOUT_KEYWORDS and RUNNER_OPTIN_KEYWORDS when set, replacing the defaults.
 */
import { keywordIntent, keywordsOf } from '../../runner/src/audience/keywords';
import { loadConfig } from '../../runner/src/config';

const config = (extra: NodeJS.ProcessEnv = {}) => loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379', ...extra });

test('the default keywords match the whole message in any case, with accents, spaces and punctuation', () => {
	const keywords = keywordsOf(config());
	for (const text of [
		'STOP',
		'stop',
		' Stop! ',
		'stop.',
		'Unsubscribe',
		'BAJA',
		'Parar',
		'ARRÊT',
		'arret',
		'Stopp',
		'opt-out',
		'Opt out',
		'¡Baja!',
	]) {
		expect({ text, intent: keywordIntent(keywords, text) }).toEqual({ text, intent: 'opt_out' });
	}
	for (const text of ['START', 'start', 'Unstop', 'ALTA', ' alta. ']) {
		expect({ text, intent: keywordIntent(keywords, text) }).toEqual({ text, intent: 'opt_in' });
	}
	// A keyword inside a sentence, a message of another kind, or no text at all is not one.
	for (const text of [
		'please stop',
		"don't stop",
		'stop it',
		'STOPPED',
		'yes',
		'',
		undefined,
		null,
		42,
		{ text: 'STOP' },
		'STOP'.repeat(20),
	]) {
		expect({ text, intent: keywordIntent(keywords, text) }).toEqual({ text, intent: undefined });
	}
});

test('RUNNER_OPTOUT_KEYWORDS and RUNNER_OPTIN_KEYWORDS replace the defaults', () => {
	const keywords = keywordsOf(config({ RUNNER_OPTOUT_KEYWORDS: 'halt, Désinscrire', RUNNER_OPTIN_KEYWORDS: 'resume' }));
	expect(keywordIntent(keywords, 'HALT')).toBe('opt_out');
	expect(keywordIntent(keywords, 'desinscrire!')).toBe('opt_out');
	expect(keywordIntent(keywords, 'Resume')).toBe('opt_in');
	expect(keywordIntent(keywords, 'STOP')).toBeUndefined();
	expect(keywordIntent(keywords, 'START')).toBeUndefined();
});
