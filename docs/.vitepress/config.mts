/**
 * The documentation site (VitePress): `npm run docs:dev` serves it, `npm run docs:build` builds it
 * into docs/.vitepress/dist and `npm run docs:links` then checks every internal link and anchor.
 * The sidebar is read from the folders, so adding a page is adding a file: each section's pages in
 * the order of their `order` front matter (then by title), titled by their first heading.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { defineConfig, type DefaultTheme } from 'vitepress';

const docs = join(import.meta.dirname, '..');

interface Page {
	title: string;
	order: number;
	link: string;
}

function pageOf(folder: string, file: string): Page {
	const text = readFileSync(join(docs, folder, file), 'utf8');
	const order = /^---\n[\s\S]*?^order:\s*(\d+)\s*$[\s\S]*?^---$/m.exec(text)?.[1];
	const title = /^# (.+)$/m.exec(text)?.[1] ?? file;
	const name = file.replace(/\.md$/, '');
	return {
		title: title.replace(/`/g, ''),
		order: order === undefined ? 1000 : Number(order),
		link: `/${folder}/${name === 'index' ? '' : name}`,
	};
}

/** The folder's pages, index first, then by `order` and title. */
function pagesOf(folder: string): Page[] {
	return readdirSync(join(docs, folder))
		.filter((file) => file.endsWith('.md'))
		.map((file) => pageOf(folder, file))
		.sort(
			(a, b) =>
				Number(b.link.endsWith('/')) - Number(a.link.endsWith('/')) ||
				a.order - b.order ||
				a.title.localeCompare(b.title),
		);
}

/**
 * A sidebar group of the folder's pages; each subfolder is a group of its own inside it (titled by
 * its index page), as the decision records are grouped by subject. Nothing while the folder is missing.
 */
function section(text: string, folder: string): DefaultTheme.SidebarItem[] {
	if (!existsSync(join(docs, folder))) return [];
	const subfolders = readdirSync(join(docs, folder), { withFileTypes: true })
		.filter((entry) => entry.isDirectory())
		.map((entry) => `${folder}/${entry.name}`)
		.map((sub) => ({ sub, pages: pagesOf(sub) }))
		.filter(({ pages }) => pages.length > 0)
		.sort((a, b) => a.pages[0].order - b.pages[0].order || a.pages[0].title.localeCompare(b.pages[0].title));
	const items: DefaultTheme.SidebarItem[] = [
		...pagesOf(folder).map(({ title, link }) => ({ text: title, link })),
		...subfolders.map(({ pages }) => ({
			text: pages[0].title,
			collapsed: true,
			items: pages.map(({ title, link }) => ({ text: title, link })),
		})),
	];
	return items.length === 0 ? [] : [{ text, collapsed: false, items }];
}

const sections: Array<[string, string]> = [
	['Guides', 'guide'],
	['Operating the runner', 'operating'],
	['Reference', 'reference'],
	['Decisions', 'decisions'],
];

export default defineConfig({
	title: 'Convo for n8n',
	description: 'An n8n community node pack and a BullMQ job runner for the Convo messaging service',
	cleanUrls: true,
	lastUpdated: false,
	// A dead internal link fails the build; localhost links are the sandbox's and the runner's own pages.
	ignoreDeadLinks: 'localhostLinks',
	// decisions.md is being split into docs/decisions/; it leaves the site until it is gone.
	srcExclude: ['**/README.md', 'decisions.md'],
	markdown: {
		// Inline code is shown as written: an n8n expression in it (`{{ $json.phone }}`) is not Vue's.
		config(md) {
			const codeInline = md.renderer.rules.code_inline;
			md.renderer.rules.code_inline = (tokens, index, options, env, self) =>
				(codeInline?.(tokens, index, options, env, self) ?? self.renderToken(tokens, index, options)).replace(
					/^<code/,
					'<code v-pre',
				);
		},
	},
	themeConfig: {
		nav: [
			{ text: 'Guides', link: '/guide/' },
			{ text: 'Operating', link: '/operating/' },
			{ text: 'Reference', link: '/reference/' },
			{ text: 'Architecture', link: '/architecture' },
			{ text: 'Decisions', link: '/decisions/' },
		],
		sidebar: [
			...sections.flatMap(([text, folder]) => section(text, folder)),
			{
				text: 'The code',
				items: [
					{ text: 'Architecture', link: '/architecture' },
					{ text: 'Benchmarks', link: '/benchmarks' },
					{ text: 'Mutation check', link: '/mutation-check' },
				],
			},
		],
		search: { provider: 'local' },
		outline: [2, 3],
	},
});
