/**
 * A URL may carry secrets: userinfo (user:password@) and a query string (a signed URL's
 * X-Amz-Signature, a token). The runner keeps the whole URL only where it must read it again (a
 * cron schedule, a queued reindex run), sealed with AES-256-GCM under a key derived from the key
 * webhook secrets derive from (secret.ts); everywhere else (Redis fields shown to clients, logs,
 * answers, reports, events, errors) it shows only origin and path.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

import type { RunnerConfig } from '../config';
import { FieldError } from '../errors';
import { webhookKey } from '../webhooks/secret';

const SEALED = /^v1\.([\w-]+)\.([\w-]+)\.([\w-]+)$/;

export function isHttpUrl(text: string): boolean {
	return /^https?:\/\//i.test(text);
}

/** Origin and path of an http(s) URL (no userinfo, query or fragment); anything else as it is. */
export function shownUrl(text: string): string {
	if (!isHttpUrl(text)) return text;
	try {
		const url = new URL(text);
		return `${url.origin}${url.pathname}`;
	} catch {
		return '(a URL that does not parse)';
	}
}

/** True when showing the URL would drop something: userinfo, a query or a fragment. */
function hasSecrets(text: string): boolean {
	return isHttpUrl(text) && shownUrl(text) !== text;
}

/** The sealing key, or undefined when the process has neither RUNNER_WEBHOOK_KEY nor RUNNER_TOKEN. */
function sealingKey(config: RunnerConfig): Buffer | undefined {
	const base = webhookKey(config);
	return base === undefined
		? undefined
		: Buffer.from(hkdfSync('sha256', base, Buffer.alloc(0), 'convo-runner url seal v1', 32));
}

const NO_SEALING_KEY =
	'RUNNER_WEBHOOK_KEY (or RUNNER_TOKEN) must be set to keep a URL with credentials or a query string: ' +
	'the runner stores it sealed under a key derived from it';

export class SealError extends Error {}

/** The URL sealed for storage; throws SealError naming the variable when no key is configured. */
function sealUrl(config: RunnerConfig, url: string): string {
	const key = sealingKey(config);
	if (!key) throw new SealError(NO_SEALING_KEY);
	const iv = randomBytes(12);
	const cipher = createCipheriv('aes-256-gcm', key, iv);
	const sealed = Buffer.concat([cipher.update(url, 'utf8'), cipher.final()]);
	return `v1.${iv.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}.${sealed.toString('base64url')}`;
}

function unsealUrl(config: RunnerConfig, sealed: string): string {
	const key = sealingKey(config);
	if (!key) throw new SealError(`this process cannot read its source again: ${NO_SEALING_KEY}`);
	const parts = SEALED.exec(sealed);
	if (!parts) throw new SealError('the stored source URL is damaged');
	try {
		const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(parts[1], 'base64url'));
		decipher.setAuthTag(Buffer.from(parts[2], 'base64url'));
		return Buffer.concat([decipher.update(Buffer.from(parts[3], 'base64url')), decipher.final()]).toString('utf8');
	} catch {
		throw new SealError(
			'the source URL was sealed under another key: every runner process needs the same ' +
				'RUNNER_WEBHOOK_KEY (or RUNNER_TOKEN)',
		);
	}
}

/**
 * How a source is stored: `source` to show, and `sealed` when the whole URL holds more than that.
 * Without a key to seal it, the setting is refused (FieldError), named `field` as its client calls it.
 */
export function storedSource(config: RunnerConfig, source: string, field: string): { source: string; sealed?: string } {
	if (!hasSecrets(source)) return { source };
	try {
		return { source: shownUrl(source), sealed: sealUrl(config, source) };
	} catch (error) {
		throw new FieldError(`${field} holds credentials or a query string: ${(error as Error).message}`, field);
	}
}

/** The source to read: the sealed URL opened again, or the stored one. */
export function sourceToRead(config: RunnerConfig, stored: { source: string; sealed?: string }): string {
	return stored.sealed ? unsealUrl(config, stored.sealed) : stored.source;
}
