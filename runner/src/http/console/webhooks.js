// Webhooks: the URLs that receive signed runner events. Add one (its signing secret shown once, as the
// API answers it), send it a test event, enable one disabled after failed deliveries, remove one
// (confirmed in the page), and read a webhook's recent delivery attempts with the receiver's answer.
(function () {
	'use strict';
	var C = window.ConvoConsole;
	var el = C.el;
	var EVENTS = [
		['campaign.finished', 'a campaign finished (completed, cancelled or failed)'],
		['campaign.paused', 'a campaign paused (by hand, or after failures)'],
		['campaign.delivery_settled', 'a campaign\u2019s delivery tracking settled'],
		['reindex.finished', 'a reindex run ended'],
	];
	/** The API's fields as this page's form labels them. */
	var LABELS = { url: 'URL', events: 'Events', description: 'Description' };
	var PAGE_SIZE = 100;
	/** What an act that moved to another of this page's views says there (the view it was said in is gone). */
	var flash = '';

	/** Says `text` in the view of `hash`: at once when it is the one shown, else once the page moves there. */
	function sayAt(hash, text) {
		if (location.hash === hash) return text;
		flash = text;
		location.hash = hash;
		return null;
	}

	function addForm(added) {
		var url = el('input', {
			type: 'url',
			name: 'url',
			required: true,
			maxlength: '2048',
			'data-testid': 'webhook-url',
			placeholder: 'https://hooks.example.com/convo',
			autocomplete: 'off',
		});
		var boxes = EVENTS.map(function (event) {
			return el('input', { type: 'checkbox', name: 'events', value: event[0], 'data-testid': 'webhook-event' });
		});
		var events = el(
			'fieldset',
			{ class: 'choices', 'data-testid': 'webhook-events' },
			[el('legend', { text: 'Events' })].concat(
				boxes.map(function (box, i) {
					box.id = 'webhook-event-' + i;
					return el('div', { class: 'choice' }, [
						box,
						el('label', { for: box.id }, [el('code', { text: EVENTS[i][0] }), ' ', EVENTS[i][1]]),
					]);
				}),
			),
		);
		var description = el('input', {
			type: 'text',
			name: 'description',
			maxlength: '500',
			'data-testid': 'webhook-description',
		});
		var problem = el('p', { class: 'error', role: 'alert', 'data-testid': 'webhook-error' });
		var submit = el('button', { type: 'submit', 'data-testid': 'webhook-add' }, ['Add webhook']);
		var form = el('form', { class: 'panel ops', 'data-testid': 'webhook-form', novalidate: true }, [
			el('h2', { text: 'Add a webhook' }),
			C.field('URL', url, 'Where each event is POSTed, signed with the secret shown once after adding.'),
			events,
			C.field('Description', description, 'Optional: a note for whoever reads this list.'),
			el('div', { class: 'actions' }, [submit]),
			problem,
		]);
		form.addEventListener('submit', function (event) {
			event.preventDefault();
			problem.textContent = '';
			var chosen = boxes
				.filter(function (box) {
					return box.checked;
				})
				.map(function (box) {
					return box.value;
				});
			// The form's own rules first, named as it labels them; the API checks the same.
			if (!url.value.trim()) return (problem.textContent = 'URL is required');
			if (!chosen.length) return (problem.textContent = 'Events: choose at least one event');
			var body = { url: url.value.trim(), events: chosen };
			if (description.value.trim()) body.description = description.value.trim();
			submit.disabled = true;
			C.api('POST', '/api/webhooks', body)
				.then(function (created) {
					url.value = '';
					description.value = '';
					boxes.forEach(function (box) {
						box.checked = false;
					});
					added(created);
				})
				.catch(function (error) {
					problem.textContent = C.errorText(error, LABELS);
				})
				.then(function () {
					submit.disabled = false;
				});
		});
		return form;
	}

	/**
	 * The secret of the webhook just added, as the API answered it this once: kept in this view only
	 * (not in the page's state, nor shown again by any refresh), gone with Done or when the operator leaves.
	 */
	function secretBox(created, done) {
		var value = el('input', {
			type: 'text',
			readonly: true,
			value: created.secret,
			'data-testid': 'webhook-secret',
			autocomplete: 'off',
			spellcheck: 'false',
		});
		var close = el('button', { type: 'button', 'data-testid': 'webhook-secret-done' }, ['Done, I copied it']);
		close.addEventListener('click', done);
		return el('div', { class: 'created', role: 'status', 'data-testid': 'webhook-created' }, [
			el('p', {}, [
				'Webhook ',
				el('strong', { text: created.id }),
				' added. Its signing secret is shown this once: give it to the receiver, which checks each ' +
					'delivery\u2019s convo-runner-signature header with it.',
			]),
			C.field('Signing secret', value),
			close,
		]);
	}

	function stateOf(webhook) {
		return webhook.disabled_at ? 'disabled' : 'enabled';
	}

	function webhookTable(webhooks, selected, act) {
		var rows = webhooks.map(function (w) {
			var state = stateOf(w);
			var failures = w.failures > 0 ? w.failures + ' in a row' : 'none';
			var buttons = [
				el('a', { class: 'button', href: '#/webhooks/' + w.id, 'data-testid': 'webhook-deliveries' }, ['Deliveries']),
				act('Send test event', 'webhook-test', function () {
					return C.api('POST', '/api/webhooks/' + w.id + '/test').then(function (answer) {
						return sayAt(
							'#/webhooks/' + w.id,
							answer.queued
								? 'Test event queued for ' + w.url + ': its delivery shows below.'
								: 'A test event for ' + w.url + ' is queued already: its delivery shows below.',
						);
					});
				}),
			];
			if (w.disabled_at)
				buttons.push(
					act('Enable again', 'webhook-enable', function () {
						return C.api('POST', '/api/webhooks/' + w.id + '/enable').then(function () {
							return w.url + ' is enabled again: later events are delivered to it.';
						});
					}),
				);
			buttons.push(
				act(
					'Remove…',
					'webhook-remove',
					function () {
						return C.confirm(
							'Remove this webhook?',
							'Nothing more is delivered to ' +
								w.url +
								', retries still queued included. Added again, it gets a new id and a new secret.',
							'Remove webhook',
						).then(function (ok) {
							if (!ok) return null;
							return C.api('DELETE', '/api/webhooks/' + w.id).then(function () {
								return selected === w.id ? sayAt('#/webhooks', w.url + ' removed.') : w.url + ' removed.';
							});
						});
					},
					'danger',
				),
			);
			return el('tr', { 'data-testid': 'webhook-row', 'data-id': w.id, class: selected === w.id ? 'selected' : '' }, [
				el('td', { class: 'cut' }, [
					el('span', { class: 'clip', title: w.url, 'data-testid': 'webhook-row-url', text: w.url }),
					el('small', { class: 'id', text: w.id + (w.description ? ' · ' + w.description : '') }),
				]),
				el(
					'td',
					{ 'data-testid': 'webhook-row-events' },
					w.events.map(function (event) {
						return el('code', { class: 'tag', text: event });
					}),
				),
				el('td', { 'data-testid': 'webhook-row-state' }, [
					C.badge(state),
					w.disabled_at ? el('small', { class: 'reason', text: w.disabled_reason || '' }) : '',
				]),
				el('td', { 'data-testid': 'webhook-row-failures', text: failures }),
				el('td', {}, [C.when(w.created_at)]),
				el('td', { class: 'row-actions' }, buttons),
			]);
		});
		return C.table(['URL', 'Events', 'State', 'Failed attempts', 'Added', 'Actions'], rows, {
			class: 'list cards webhooks',
			'data-testid': 'webhook-table',
		});
	}

	function deliveryTable(deliveries) {
		var rows = deliveries.map(function (d) {
			return el('tr', { 'data-testid': 'delivery-row' }, [
				el('td', {}, [C.when(d.at)]),
				el('td', { class: 'cut' }, [
					el('code', { text: d.type }),
					el('small', { class: 'clip id', title: d.event_id, text: d.event_id }),
				]),
				el('td', { text: d.attempt ? d.attempt + ' of ' + d.attempts : 'none made' }),
				el('td', { 'data-testid': 'delivery-outcome' }, [C.badge(d.outcome)]),
				el('td', { 'data-testid': 'delivery-status', text: d.status === null ? '—' : String(d.status) }),
				el('td', { text: d.duration_ms === null ? '—' : d.duration_ms + ' ms' }),
				el('td', { class: 'cut', 'data-testid': 'delivery-error' }, [
					d.error ? el('span', { class: 'clip', title: d.error, text: d.error }) : '—',
				]),
			]);
		});
		return C.table(['When', 'Event', 'Attempt', 'Outcome', 'Status', 'Took', 'Error'], rows, {
			class: 'list cards deliveries',
			'data-testid': 'delivery-table',
		});
	}

	function open(page, selected) {
		var seen = 0;
		var secret = el('div');
		var list = el('div', { 'data-testid': 'webhook-list' });
		var count = el('p', { class: 'meta', 'data-testid': 'webhook-count' });
		var note = el('p', { class: 'note', role: 'status', 'data-testid': 'webhook-message' });
		var deliveriesTitle = el('h2', { 'data-testid': 'deliveries-title' });
		var deliveries = el('div', { 'data-testid': 'webhook-deliveries-list' });
		var deliveriesPart = el('section', { 'aria-labelledby': 'deliveries-title' }, [deliveriesTitle, deliveries]);
		deliveriesTitle.id = 'deliveries-title';
		deliveriesPart.hidden = !selected;
		var said = flash;
		flash = '';

		function say(text, isError) {
			note.className = isError ? 'note error' : 'note';
			note.textContent = text || '';
		}

		/** A row's button: runs `action` (a promise of what to say, null for nothing), then refreshes the page. */
		function act(label, testid, action, kind) {
			var button = el('button', { type: 'button', class: kind, 'data-testid': testid }, [label]);
			button.addEventListener('click', function () {
				button.disabled = true;
				action()
					.then(function (said) {
						if (said) say(said);
						return refresh();
					})
					.catch(function (error) {
						if (error.message !== 'signed out') say(C.errorText(error, LABELS), true);
					})
					.then(function () {
						button.disabled = false;
					});
			});
			return button;
		}

		function refresh() {
			var asked = ++seen;
			return Promise.all([
				C.api('GET', '/api/webhooks?limit=' + PAGE_SIZE),
				selected
					? C.api('GET', '/api/webhooks/' + encodeURIComponent(selected) + '/deliveries').catch(function (error) {
							if (error.message === 'signed out') throw error;
							return { missing: C.errorText(error) };
						})
					: null,
			]).then(function (all) {
				if (asked !== seen) return;
				var answer = all[0];
				count.textContent = answer.total
					? C.plural(answer.total, 'webhook') +
						(answer.total > answer.webhooks.length ? ', the first ' + PAGE_SIZE + ' shown' : '')
					: '';
				list.replaceChildren(
					answer.webhooks.length
						? webhookTable(answer.webhooks, selected, act)
						: el('p', { 'data-testid': 'webhook-none', text: 'No webhook yet: add one below.' }),
				);
				if (!selected) return;
				var webhook = answer.webhooks.filter(function (w) {
					return w.id === selected;
				})[0];
				deliveriesTitle.textContent = 'Recent deliveries to ' + (webhook ? webhook.url : selected);
				var found = all[1];
				if (found.missing) deliveries.replaceChildren(el('p', { class: 'error', text: found.missing }));
				else if (!found.deliveries.length)
					deliveries.replaceChildren(
						el('p', { 'data-testid': 'delivery-none', text: 'No delivery yet: send a test event to see one.' }),
					);
				else deliveries.replaceChildren(deliveryTable(found.deliveries));
			});
		}

		var form = addForm(function (created) {
			secret.replaceChildren(
				secretBox(created, function () {
					secret.replaceChildren();
				}),
			);
			say('');
			secret.querySelector('input').focus();
			refresh().catch(function () {});
		});

		page.replaceChildren(
			el('h1', { text: 'Webhooks' }),
			el('p', {
				class: 'intro',
				text:
					'URLs that receive signed runner events. A webhook whose deliveries fail too many times in a row ' +
					'(RUNNER_WEBHOOK_DISABLE_AFTER) is disabled until it is enabled again; a test event checks its ' +
					'receiver first.',
			}),
			secret,
			count,
			note,
			list,
			deliveriesPart,
			form,
		);
		say(said);
		return { refresh: refresh };
	}

	C.page({
		pattern: /^#\/webhooks(?:\/([A-Za-z0-9_-]+))?$/,
		open: function (element, match) {
			return open(element, match[1]);
		},
	});
})();
