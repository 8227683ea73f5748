/**
 * The name a campaign gets when its client gives none
 * (docs/decisions/campaigns/every-campaign-has-a-name.md): a file or URL source names it after its
 * file (`customers-march.csv` -> `customers-march`); rows handed over in the request (an upload,
 * inline JSON rows, a draft) name no file, so "Upload" and the minute of the create, in UTC, tell
 * one from the next.
 */
import { basename, extname } from 'node:path';

import { fitCampaignName } from 'convo-contract';

import { isHttpUrl } from '../net/urls';

/** "Upload 2026-03-01 09:00 UTC". */
function uploadName(at: number): string {
	return `Upload ${new Date(at).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/**
 * The last segment of a path (a URL's, decoded) without its
 * extension; the whole segment when that is all extension (`.csv`).
 */
function fileName(source: string): string {
	let path = source;
	let host = '';
	if (isHttpUrl(source)) {
		try {
			const url = new URL(source);
			host = url.host;
			path = url.pathname;
		} catch {
			return '';
		}
	}
	let file = basename(path);
	try {
		file = decodeURIComponent(file);
	} catch {
		// A segment with a stray % is named as it is written.
	}
	const bare = file.slice(0, file.length - extname(file).length);
	return bare || file || host;
}

/** `source`: the file path or URL the rows are read from; undefined when the rows came in the request. */
export function defaultCampaignName(source: string | undefined, at: number): string {
	return (source === undefined ? undefined : fitCampaignName(fileName(source))) ?? uploadName(at);
}

/**
 * What the API stores as the source of rows that came in the
 * request (http/campaignRoutes.ts): no file to be named after.
 */
const REQUEST_SOURCES = /^(upload\.(csv|ndjson)|request\.json)$/;

/** A campaign stored before campaigns had names: named now as its create would have named it. */
export function storedCampaignName(hash: Record<string, string>, createdAt: number): string {
	if (hash.name) return hash.name;
	const source = hash.source ?? '';
	return defaultCampaignName(source === '' || REQUEST_SOURCES.test(source) ? undefined : source, createdAt);
}
