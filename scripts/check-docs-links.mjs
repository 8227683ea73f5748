/**
 * `npm run docs:links`: every internal link and #anchor of the built documentation site
 * (docs/.vitepress/dist, after `npm run docs:build`) and of README.md resolves. VitePress's own
 * build fails on a link to a missing page only; anchors and the README are checked here, by
 * linkinator on a local server. Links off this machine (the service, npm, GitHub) are not
 * followed: CI reaches none of them.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { LinkChecker } from 'linkinator';

import { freePort } from './freePort.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const site = join(root, 'docs', '.vitepress', 'dist');

/** The broken links of one check: linkinator serves `path` on a free port and follows what is on it. */
async function brokenLinks(options) {
	const port = await freePort();
	const local = `http://127.0.0.1:${port}`;
	const checker = new LinkChecker();
	const result = await checker.check({
		port,
		checkFragments: true,
		concurrency: 20,
		// A request the local server drops (a loaded machine: CI runs the lint beside this) is tried
		// again before it counts as broken; a missing file answers 404 every time.
		retryErrors: true,
		retryErrorsCount: 3,
		retryErrorsJitter: 500,
		linksToSkip: async (link) => /^[a-z]+:/i.test(link) && !link.startsWith(local),
		...options,
	});
	const shown = (url = '') => url.replace(local, '').replace(`${site}/`, 'site: ');
	return result.links
		.filter((link) => link.state === 'BROKEN')
		.map((link) => `${shown(link.url)} (on ${shown(link.parent) || 'the start'}; HTTP ${link.status ?? 'none'})`);
}

process.chdir(root);
if (!existsSync(join(site, 'index.html'))) {
	console.error('docs:links: no built site in docs/.vitepress/dist: run npm run docs:build first');
	process.exit(1);
}
const broken = [
	...(await brokenLinks({ path: site, recurse: true, cleanUrls: true })),
	// The README and the Markdown files it links to, as GitHub shows them (anchors by its heading slugs).
	...(await brokenLinks({ path: 'README.md', serverRoot: root, markdown: true, recurse: true })),
];
if (broken.length > 0) {
	console.error(`docs:links: ${broken.length} broken link(s):\n${broken.map((line) => `  ${line}`).join('\n')}`);
	process.exit(1);
}
console.log('docs:links: every internal link and anchor of the site and README.md resolves');
