/** What both files of the frequency cap's tests (cap.test.ts, cap-counts.test.ts) write and create, bound to a file's runner. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { campaignStatus, createCampaign } from '../../runner/src/core/campaigns';
import { positionalTemplate, type RunnerUnderTest } from './support';

export function capKit(runner: RunnerUnderTest) {
	/** A CSV of these phones. */
	function csvOf(phones: string[]): string {
		const path = join(mkdtempSync(join(tmpdir(), 'convo-cap-')), 'recipients.csv');
		writeFileSync(path, `phone,1,2\n${phones.map((phone, i) => `+${phone},Customer ${i},order ${i}`).join('\n')}\n`);
		return path;
	}

	/** The campaign's status once it ended, completed, failed or cancelled. */
	const finished = (id: string) => async () => {
		const status = await campaignStatus(runner.context, id);
		return ['completed', 'failed', 'cancelled'].includes(status.state) ? status : undefined;
	};

	/** A campaign of the fixture's positional template from `from` at 100/s. */
	async function create(source: string, from: string, extra: Record<string, unknown> = {}) {
		const created = await createCampaign(runner.context, {
			templateId: positionalTemplate(runner.business).id,
			from,
			source,
			rate: 100,
			...extra,
		});
		if (created.kind !== 'campaign') throw new Error('expected a campaign');
		return created;
	}

	return { csvOf, finished, create };
}
