/** `suppression add|remove|check|list|import|export`: the phones no marketing campaign sends to. */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

import type { Command } from 'commander';

import * as core from '../core/audience';
import { UserError } from '../errors';
import { answer, plural, runs } from './command';

/** The CLI's name of the phone argument, in errors. */
const PHONE = '<phone>';

const entryLine = (entry: core.SuppressionEntry) => `${entry.phone}  ${entry.at}  ${entry.source}  ${entry.reason}`;

export function addSuppressionCommands(program: Command): void {
	const suppression = program
		.command('suppression')
		.description(
			'the suppression list: phones that opted out (STOP) or were put there; no marketing campaign sends to them',
		);

	runs<{ reason?: string; json?: boolean }>(
		suppression
			.command('add <phone>')
			.description(
				'put a phone on the list (source operator); one already there keeps its first entry, unless a keyword made it',
			)
			.option('--reason <text>', 'why, kept with the entry (at most 200 characters)'),
		async ({ context, args: [phone], options }) => {
			const entry = await core.addSuppression(context, { phone, reason: options.reason, source: 'operator' }, PHONE);
			return answer(
				entry,
				() =>
					`${entry.phone}: ${entry.added ? 'added' : 'already on the list'} (${entry.source}, ` +
					`${entry.at}: ${entry.reason})`,
			);
		},
	);

	runs(
		suppression.command('remove <phone>').description('take a phone off the list: campaigns send to it again'),
		async ({ context, args: [phone] }) => {
			const removed = await core.removeSuppression(context, phone, PHONE);
			return answer(removed, () => `${removed.phone}: ${removed.removed ? 'removed' : 'was not on the list'}`);
		},
	);

	runs(
		suppression.command('check <phone>').description('whether a phone is on the list, and why'),
		async ({ context, args: [phone] }) => {
			const checked = await core.checkSuppression(context, phone, PHONE);
			return answer(checked, () =>
				checked.entry
					? `${checked.phone}: suppressed (${checked.entry.source}, ${checked.entry.at}: ${checked.entry.reason})`
					: `${checked.phone}: not suppressed`,
			);
		},
	);

	runs<{ limit: string; offset: string; json?: boolean }>(
		suppression
			.command('list')
			.description('the list, newest first, a page at a time (export writes it all)')
			.option('--limit <n>', 'entries on the page', '100')
			.option('--offset <n>', 'entries to skip', '0'),
		async ({ context, options }) => {
			const limit = Number(options.limit);
			const offset = Number(options.offset);
			if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
				throw new UserError('--limit must be a whole number from 1 to 1000');
			if (!Number.isInteger(offset) || offset < 0) throw new UserError('--offset must be a whole number from 0');
			const page = await core.pageSuppressions(context, { limit, offset });
			return answer(page, () =>
				page.items.length > 0
					? [...page.items.map(entryLine), `${offset + 1}-${offset + page.items.length} of ${page.total}`].join('\n')
					: `no entries (${page.total} on the list)`,
			);
		},
	);

	runs(
		suppression
			.command('import <file-or-url>')
			.description(
				'put the phones of a CSV on the list (source import): a phone column, optionally reason; ' +
					'a bad row is reported with its line, the good ones kept',
			),
		async ({ context, args: [source] }) => {
			const imported = await core.importSuppressionFile(context, source);
			return answer(imported, () =>
				[
					`${plural(imported.rows, 'row')}: ${imported.added} added, ${imported.already} already on the list, ` +
						`${imported.rejected} rejected`,
					...imported.rejections.map((r) => `  line ${r.line}: ${r.reason}`),
					...(imported.rejected > imported.rejections.length
						? [`  and ${imported.rejected - imported.rejections.length} more`]
						: []),
				].join('\n'),
			);
		},
	);

	runs<{ output?: string; json?: boolean }>(
		suppression
			.command('export')
			.description('the whole list as CSV (phone,reason,source,at), oldest first')
			.option('--output <file>', 'write it to a file instead of stdout'),
		async ({ context, options }) => {
			const out = options.output ? createWriteStream(options.output) : process.stdout;
			for await (const chunk of core.suppressionCsv(context)) {
				if (!out.write(chunk)) await once(out, 'drain');
			}
			if (options.output) {
				out.end();
				await once(out, 'finish');
			}
		},
	);
}
