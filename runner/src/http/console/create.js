// New campaign: a CSV uploaded through POST /api/campaigns (the settings in the query string, as
// the API takes an upload) or a URL the runner reads (JSON; a cron schedule needs one), its
// accepted and rejected counts shown on the campaign's page. "Check first (dry run)" sends the same
// request with dry_run (nothing stored or sent) and shows its counts, reasons, first rejections and
// estimated duration; the form's one "Create and start" then sends the real one.
(function () {
	'use strict';
	var C = window.ConvoConsole;
	var el = C.el;

	function field(label, input, hint) {
		return el('label', {}, [label, input].concat(hint ? [el('small', { text: hint })] : []));
	}

	function show(app) {
		var inputs = {
			name: el('input', { name: 'name', 'data-testid': 'create-name', placeholder: 'e.g. November newsletter' }),
			file: el('input', { name: 'file', type: 'file', accept: '.csv,text/csv', 'data-testid': 'create-file' }),
			source_url: el('input', {
				name: 'source_url',
				type: 'url',
				'data-testid': 'create-source-url',
				placeholder: 'https://example.com/recipients.csv',
			}),
			template_id: el('input', { name: 'template_id', required: true, 'data-testid': 'create-template' }),
			from: el('input', { name: 'from', required: true, 'data-testid': 'create-from', placeholder: '4915112345678' }),
			rate: el('input', {
				name: 'rate',
				type: 'number',
				min: '1',
				step: '1',
				'data-testid': 'create-rate',
				placeholder: 'the runner default',
			}),
			at: el('input', { name: 'at', type: 'datetime-local', 'data-testid': 'create-at' }),
			cron: el('input', { name: 'cron', 'data-testid': 'create-cron', placeholder: '0 9 * * 1' }),
			tz: el('input', { name: 'tz', 'data-testid': 'create-tz', placeholder: 'Europe/Berlin' }),
			window: el('input', { name: 'window', 'data-testid': 'create-window', placeholder: '09:00-20:00' }),
			end_at: el('input', { name: 'end_at', type: 'datetime-local', 'data-testid': 'create-end' }),
			variants: el('textarea', {
				name: 'variants',
				rows: '3',
				'data-testid': 'create-variants',
				placeholder: 'template id:first_name,city',
			}),
			test_share: el('input', { name: 'test_share', 'data-testid': 'create-test-share', placeholder: '10%' }),
			pick_by: el('select', { name: 'pick_by', 'data-testid': 'create-pick-by' }, [
				el('option', { value: 'read', text: 'read' }),
				el('option', { value: 'replied', text: 'replied' }),
				el('option', { value: 'delivered', text: 'delivered' }),
			]),
			decide_after: el('input', { name: 'decide_after', 'data-testid': 'create-decide-after', placeholder: '2h' }),
			seed: el('input', { name: 'seed', 'data-testid': 'create-seed', placeholder: 'drawn at create' }),
			if_tie: el('select', { name: 'if_tie', 'data-testid': 'create-if-tie' }, [
				el('option', { value: 'first', text: 'send the first variant' }),
				el('option', { value: 'wait', text: 'wait for my choice' }),
			]),
		};
		/** The A/B test's variants, one a line; none: a campaign of one template. */
		function variantLines() {
			return inputs.variants.value
				.split('\n')
				.map(function (line) {
					return line.trim();
				})
				.filter(Boolean);
		}
		// With variants, the template is the first variant's: the template id may stay empty.
		inputs.variants.addEventListener('input', function () {
			inputs.template_id.required = variantLines().length === 0;
		});
		var message = el('div', { 'data-testid': 'create-result', 'aria-live': 'polite' });
		var submit = el('button', { type: 'submit', 'data-testid': 'create-submit' }, ['Create and start']);
		var check = el('button', { type: 'button', 'data-testid': 'create-dry-run' }, ['Check first (dry run)']);
		var form = el('form', { class: 'card wide', 'data-testid': 'create-form' }, [
			field(C.LABELS.name, inputs.name, 'optional; shown in the list'),
			field('Recipients (CSV)', inputs.file, 'a phone column, the template variables, optional buttons'),
			field(
				C.LABELS.source_url,
				inputs.source_url,
				'or instead of a CSV: read by the runner; a cron schedule needs one, as it re-reads it at each firing',
			),
			field(C.LABELS.template_id, inputs.template_id),
			field(C.LABELS.from, inputs.from),
			field(C.LABELS.rate, inputs.rate),
			field(C.LABELS.at, inputs.at, 'optional; empty starts now'),
			field(C.LABELS.cron, inputs.cron, 'optional; a schedule of campaigns from the URL above'),
			field(C.LABELS.tz, inputs.tz),
			field(
				C.LABELS.window,
				inputs.window,
				"optional; in each recipient's local time (a tz column, or the phone's country), " +
					'e.g. mon-fri 09:00-20:00, sat 10:00-14:00',
			),
			field(C.LABELS.end_at, inputs.end_at, 'optional; recipients still unsent then are expired'),
			el('details', { 'data-testid': 'create-ab' }, [
				el('summary', { text: 'A/B test of templates (optional)' }),
				field(
					C.LABELS.variants,
					inputs.variants,
					'2 to 5, one a line: a template id, then a colon and the variables it uses; every row needs them all',
				),
				field(C.LABELS.test_share, inputs.test_share, 'the share of the audience the variants split, e.g. 10%'),
				field(C.LABELS.pick_by, inputs.pick_by, 'the rate the winner is chosen by'),
				field(C.LABELS.decide_after, inputs.decide_after, 'when the rule decides at the latest, e.g. 2h or 30m'),
				field(C.LABELS.if_tie, inputs.if_tie, 'when no variant wins beyond chance'),
				field(C.LABELS.seed, inputs.seed, "the split's seed: a dry run fills it, so the create splits alike"),
			]),
			el('div', { class: 'actions' }, [submit, check, el('a', { class: 'button', href: '#/' }, ['Back'])]),
			message,
		]);
		// The request of a create, or with `dry`, of its dry run: the same settings, the same rows.
		function send(dry) {
			// The dry run's button is no submit button: it checks the form's own rules (required, URL, rate) itself.
			var invalid = form.querySelector(':invalid');
			if (invalid) {
				message.replaceChildren(
					el('p', {
						class: 'error',
						'data-testid': 'create-error',
						text: (C.LABELS[invalid.name] || invalid.name) + ': ' + invalid.validationMessage,
					}),
				);
				form.reportValidity();
				return;
			}
			var file = inputs.file.files[0];
			var url = inputs.source_url.value.trim();
			if (Boolean(file) === Boolean(url)) {
				message.replaceChildren(
					el('p', {
						class: 'error',
						'data-testid': 'create-error',
						text: 'Recipients: choose a CSV file or give its URL (one of them).',
					}),
				);
				return;
			}
			var settings = {};
			['template_id', 'from', 'rate', 'cron', 'tz', 'name', 'window'].forEach(function (key) {
				// Only what is filled: an empty setting would be refused, and the API may not know `name` yet.
				if (inputs[key].value.trim() !== '') settings[key] = inputs[key].value.trim();
			});
			if (inputs.at.value) settings.at = new Date(inputs.at.value).toISOString();
			if (inputs.end_at.value) settings.end_at = new Date(inputs.end_at.value).toISOString();
			var variants = variantLines();
			if (variants.length > 0)
				['test_share', 'pick_by', 'decide_after', 'if_tie', 'seed'].forEach(function (key) {
					if (inputs[key].value.trim() !== '') settings[key] = inputs[key].value.trim();
				});
			submit.disabled = true;
			check.disabled = true;
			message.replaceChildren(el('p', { text: dry ? 'Checking every row…' : file ? 'Uploading…' : 'Creating…' }));
			// A file goes as the body with the settings in the query (the API's upload); a URL as JSON.
			// An upload's query repeats variants= once per variant.
			var query = new URLSearchParams(Object.assign({}, settings, dry ? { dry_run: 'true' } : {}));
			variants.forEach(function (variant) {
				query.append('variants', variant);
			});
			var sent = file
				? C.api('POST', '/api/campaigns?' + query.toString(), { raw: file, type: 'text/csv' })
				: C.api(
						'POST',
						'/api/campaigns',
						Object.assign(
							settings,
							{ source_url: url },
							variants.length > 0 ? { variants: variants } : {},
							settings.rate ? { rate: Number(settings.rate) } : {},
							dry ? { dry_run: true } : {},
						),
					);
			sent
				.then(function (answer) {
					submit.disabled = false;
					check.disabled = false;
					if (answer.kind === 'dry_run') {
						// The create splits as this dry run did.
						if (answer.ab_test) inputs.seed.value = answer.ab_test.seed;
						message.replaceChildren(dryRunResult(answer));
						return;
					}
					if (answer.kind === 'schedule') {
						message.replaceChildren(
							el('p', {
								'data-testid': 'create-schedule',
								text:
									'Schedule ' +
									answer.schedule.id +
									' created: ' +
									answer.schedule.cron +
									' (' +
									answer.schedule.tz +
									'); each firing is a campaign of its own in the list.',
							}),
							el('p', {}, [
								el('a', { href: '#/schedules', 'data-testid': 'create-schedules-link' }, ['See it in Schedules']),
							]),
						);
						return;
					}
					// The campaign's page shows what the create accepted and refused.
					C.created[answer.id] = answer;
					location.hash = '#/campaigns/' + answer.id;
				})
				.catch(function (error) {
					submit.disabled = false;
					check.disabled = false;
					message.replaceChildren(el('p', { class: 'error', 'data-testid': 'create-error', text: C.errorText(error) }));
				});
		}
		form.addEventListener('submit', function (event) {
			event.preventDefault();
			send(false);
		});
		check.addEventListener('click', function () {
			send(true);
		});
		app.replaceChildren(el('h1', { text: 'New campaign' }), form);
		return Promise.resolve();
	}

	/** A dry run's answer: counts by outcome, reasons as /errors groups them, the first rejected rows, the estimate. */
	function dryRunResult(answer) {
		// Accepted and rejected always; the outcomes of the audience rules (suppressed, ...) when some row has them.
		var counts = Object.keys(answer.counts)
			.filter(function (outcome) {
				return outcome === 'accepted' || outcome === 'rejected' || answer.counts[outcome] > 0;
			})
			.map(function (outcome) {
				return answer.counts[outcome] + ' ' + outcome;
			})
			.join(', ');
		var reasons = answer.reasons.map(function (group) {
			return el('tr', {}, [
				el('td', { text: String(group.count) }),
				el('td', { text: group.outcome }),
				el('td', { text: group.reason + (group.varies ? ' (and others that differ only in a number)' : '') }),
			]);
		});
		var rows = answer.rejections.map(function (r) {
			return el('tr', {}, [
				el('td', { text: String(r.line) }),
				el('td', { text: r.phone }),
				el('td', { text: r.reason }),
			]);
		});
		var e = answer.estimate;
		var when = e.cron
			? 'from the next firing at ' + new Date(e.starts_at).toLocaleString() + ' (' + e.cron + ', ' + e.tz + ')'
			: 'from ' + new Date(e.starts_at).toLocaleString() + ' until about ' + new Date(e.ends_at).toLocaleString();
		return el('section', { class: 'created', 'data-testid': 'dry-run-result' }, [
			el('h2', { text: 'Dry run: nothing was stored or sent' }),
			el('p', { 'data-testid': 'dry-run-counts', text: C.plural(answer.total, 'row') + ': ' + counts + '.' }),
			el('p', {
				'data-testid': 'dry-run-estimate',
				text: 'Estimated duration: ' + C.spoken(e.seconds) + ' at ' + C.plural(e.rate, 'send') + '/s, ' + when + '.',
			}),
			answer.test_send
				? el('p', { text: 'Test send to ' + answer.test_send.to + ': not sent by a dry run.' })
				: el('span'),
			answer.ab_test
				? el('p', {
						'data-testid': 'dry-run-split',
						text:
							'A/B test split (seed ' +
							answer.ab_test.seed +
							'): ' +
							answer.ab_test.split.test
								.map(function (v) {
									return 'variant ' + v.variant + ' ' + v.recipients;
								})
								.join(', ') +
							', remainder ' +
							answer.ab_test.split.remainder +
							' (gets the winner). The estimate includes the wait of up to ' +
							C.spoken(answer.ab_test.decide_after_seconds) +
							'.',
					})
				: el('span'),
			reasons.length
				? C.table(['Rows', 'Outcome', 'Reason'], reasons, { 'data-testid': 'dry-run-reasons' })
				: el('span'),
			rows.length
				? el('p', {
						text:
							'First rejected rows' +
							(answer.rejected > rows.length ? ' (' + rows.length + ' of ' + answer.rejected + ')' : '') +
							':',
					})
				: el('span'),
			rows.length ? C.table(['Line', 'Phone', 'Reason'], rows, { 'data-testid': 'dry-run-rejections' }) : el('span'),
			el('p', {
				class: 'note',
				'data-testid': 'dry-run-next',
				text:
					'Create and start (above) sends this request for real; ' +
					'change a field and check again as often as needed.',
			}),
		]);
	}

	/** What the create accepted and refused, with the first refused rows and their lines. */
	function summary(answer) {
		var rows = (answer.rejections || []).map(function (r) {
			return el('tr', {}, [
				el('td', { text: String(r.line) }),
				el('td', { text: r.phone }),
				el('td', { text: r.reason }),
			]);
		});
		return el('section', { class: 'created', 'data-testid': 'create-summary' }, [
			el('p', {
				text:
					'Created: ' +
					C.plural(answer.accepted, 'recipient') +
					' accepted, ' +
					answer.rejected +
					' rejected' +
					(answer.suppressed ? ', ' + answer.suppressed + ' suppressed (on the suppression list)' : '') +
					(answer.rejected > rows.length ? ' (the first ' + rows.length + ' below; the report has them all)' : '') +
					'.',
			}),
			rows.length ? C.table(['Line', 'Phone', 'Reason'], rows, { 'data-testid': 'create-rejections' }) : el('span'),
		]);
	}

	C.views.create = { show: show, summary: summary };
	C.page({
		pattern: /^#\/new$/,
		open: function (element) {
			show(element);
		},
	});
})();
