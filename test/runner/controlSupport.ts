/** What both files of the control tests (control.test.ts, control-feeder.test.ts) create and read, bound to a file's runner. */
import { campaignStatus, createCampaign } from '../../runner/src/core/campaigns';
import { positionalTemplate, templateSends, type RunnerUnderTest } from './support';

export function controlKit(runner: RunnerUnderTest) {
	/** The template sends the sandbox received for these phones. */
	const sendsTo = async (phones: string[]) => {
		const wanted = new Set(phones);
		return (await templateSends(runner.sandbox)).filter((message) => wanted.has(message.to));
	};

	/** A campaign of the fixture's positional template from its first number at 100/s. */
	async function create(source: string, extra: Record<string, unknown> = {}) {
		const created = await createCampaign(runner.context, {
			templateId: positionalTemplate(runner.business).id,
			from: runner.business.phoneNumbers[0],
			source,
			rate: 100,
			...extra,
		});
		if (created.kind !== 'campaign') throw new Error('expected a campaign');
		return created;
	}

	/** A waitFor check: true once the campaign is in this state. */
	const stateIs = (id: string, state: string) => async () =>
		(await campaignStatus(runner.context, id)).state === state ? true : undefined;

	return { sendsTo, create, stateIs };
}
