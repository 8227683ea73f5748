/** `webhook add|list|enable|remove|test|deliveries`: URLs that receive signed events. */
import type { Command } from 'commander';
import { RUNNER_EVENTS, RUNNER_TEST_EVENT } from 'convo-contract';

import * as core from '../core/webhooks';
import { answer, runs } from './command';

export function addWebhookCommands(program: Command): void {
	const webhook = program
		.command('webhook')
		.description(`URLs that receive signed events: ${RUNNER_EVENTS.join(', ')}`);

	runs<{ events: string; description?: string; json?: boolean }>(
		webhook
			.command('add <url>')
			.description(
				'register a URL; prints its signing secret, this once ' +
					'(it is derived from RUNNER_WEBHOOK_KEY or RUNNER_TOKEN, never stored)',
			)
			.requiredOption('--events <list>', `comma-separated, any of: ${RUNNER_EVENTS.join(', ')}`)
			.option('--description <text>', 'a note for whoever reads the list'),
		async ({ context, args: [url], options }) => {
			const events = options.events
				.split(',')
				.map((event) => event.trim())
				.filter(Boolean);
			const created = await core.createWebhook(context, {
				url,
				events: events as never,
				description: options.description,
			});
			return answer(
				created,
				() =>
					`${created.id}: ${created.url} (${created.events.join(', ')})\nsecret (shown this once): ${created.secret}`,
			);
		},
	);

	runs(webhook.command('list').description('registered webhooks, oldest first (no secrets)'), async ({ context }) => {
		const webhooks = await core.listWebhooks(context);
		return answer(
			{ webhooks },
			() =>
				webhooks
					.map((w) => {
						const description = w.description ? ` ${w.description}` : '';
						const disabled = w.disabled_at ? ` DISABLED since ${w.disabled_at}: ${w.disabled_reason}` : '';
						const failures = w.failures > 0 && !w.disabled_at ? ` (${w.failures} failed in a row)` : '';
						return `${w.id}: ${w.url} (${w.events.join(', ')})${description}${failures}${disabled}`;
					})
					.join('\n') || 'no webhooks',
		);
	});

	runs(
		webhook
			.command('enable <id>')
			.description(
				'enable a webhook that was disabled after failed deliveries: later events are delivered to it again',
			),
		async ({ context, args: [id] }) => {
			const enabled = await core.enableWebhook(context, id);
			return answer(enabled, () => `${id}: enabled`);
		},
	);

	runs(
		webhook.command('remove <id>').description('remove a webhook: no more deliveries to it, queued retries included'),
		async ({ context, args: [id] }) => {
			await core.removeWebhook(context, id);
			return answer({ id, removed: true }, () => `${id}: removed`);
		},
	);

	runs(
		webhook
			.command('test <id>')
			.description(
				`queue a ${RUNNER_TEST_EVENT} event for the webhook (a disabled one too), tried once; ` +
					'see what the receiver answered with webhook deliveries',
			),
		async ({ context, args: [id] }) => {
			const sent = await core.sendTestEvent(context, id);
			return answer(sent, () =>
				sent.queued
					? `${id}: test event queued (delivery ${sent.delivery_id}); webhook deliveries ${id} shows the answer`
					: `${id}: a test event is queued already (delivery ${sent.delivery_id})`,
			);
		},
	);

	runs(
		webhook
			.command('deliveries <id>')
			.description(`the webhook's last ${core.RECENT_DELIVERIES} delivery attempts, newest first, with their outcome`),
		async ({ context, args: [id] }) => {
			const deliveries = await core.recentDeliveries(context, id);
			return answer(
				{ deliveries },
				() =>
					deliveries
						.map((d) => {
							const status = d.status === null ? '' : ` ${d.status}`;
							const error = d.error && d.outcome !== 'delivered' && d.status === null ? `: ${d.error}` : '';
							return `${d.at} ${d.type} ${d.event_id} attempt ${d.attempt}/${d.attempts} ${d.outcome}${status}${error}`;
						})
						.join('\n') || 'no deliveries yet',
			);
		},
	);
}
