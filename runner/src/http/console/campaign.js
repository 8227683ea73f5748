// A campaign's page: built once (so typing in its forms survives), its figures refreshed every 2 s.
// Acts: start (a draft), pause, resume, cancel and retry-not-sent (both confirmed in the page, with the count),
// delete (a finished campaign, confirmed; the list follows), reconcile, change the rate, find one recipient by
// phone, download the report. The delivery funnel (audience to replied, failures by reason, in flight,
// tracking mode) follows the counts;
// an A/B test's variants follow it side by side with the rule's figures, and a button per variant chooses it.
(function () {
	'use strict';
	var C = window.ConvoConsole;
	var el = C.el;
	var CANCELLABLE = ['running', 'paused', 'scheduled', 'draft'];
	var RETRYABLE = ['paused', 'completed', 'cancelled', 'failed'];
	var DELETABLE = ['completed', 'cancelled', 'failed'];
	// A pause because the service refused the campaign's sends (paused_reason), said before last_error.
	var REFUSED = {
		template_refused: 'Paused: the service refused the template',
		number_refused: 'Paused: the service refused the sending number',
		unauthorized: 'Paused: the service refused the API key',
	};

	var PHASES = {
		testing: 'Testing',
		waiting: 'Tied: waiting for your choice',
		decided: 'Decided',
	};

	/**
	 * An A/B test: its phase, then one column per variant (its funnel over its test recipients, its
	 * rate and the leader's z against it), the rule in words, and a button per variant that chooses
	 * it (before the rule decides, or after a tie that waits).
	 */
	function abTestView(t, choose) {
		var variants = t.figures.variants;
		var pct = function (rate) {
			return (100 * rate).toFixed(1) + '%';
		};
		var row = function (label, cell) {
			return el(
				'tr',
				{},
				[el('th', { scope: 'row', text: label })].concat(
					variants.map(function (v) {
						return el('td', {
							'data-testid': 'ab-' + label.toLowerCase().replace(/\W+/g, '-').replace(/-$/, '') + '-' + v.variant,
							text: cell(v),
						});
					}),
				),
			);
		};
		var phase =
			PHASES[t.phase] +
			(t.phase === 'decided'
				? ': variant ' + t.winner + ' (' + t.chosen_by + '); the remainder (' + t.split.remainder + ') gets it'
				: t.phase === 'testing'
					? ' until ' + new Date(t.decide_at).toLocaleString() + ' at the latest'
					: '');
		var table = el('table', { class: 'list ab' }, [
			el('thead', {}, [
				el(
					'tr',
					{},
					[el('th', { text: '' })].concat(
						variants.map(function (v) {
							return el('th', { text: 'Variant ' + v.variant + (t.winner === v.variant ? ' \u2713' : '') });
						}),
					),
				),
			]),
			el('tbody', {}, [
				row('Template', function (v) {
					return v.template_id;
				}),
				row('In the test', function (v) {
					return String(v.recipients);
				}),
				row('Sent', function (v) {
					return String(v.sent);
				}),
				row('Delivered', function (v) {
					return String(v.delivered);
				}),
				row('Read', function (v) {
					return String(v.read);
				}),
				row('Replied', function (v) {
					return String(v.replied);
				}),
				row('Failed', function (v) {
					return String(v.failed);
				}),
				row('Rate (' + t.pick_by + ')', function (v) {
					return pct(v.rate);
				}),
				row('z', function (v) {
					return v.z === undefined ? 'leader' : v.z.toFixed(2);
				}),
			]),
		]);
		var buttons = variants.map(function (v) {
			var button = el('button', { type: 'button', 'data-testid': 'ab-choose-' + v.variant }, [
				'Send the remainder variant ' + v.variant,
			]);
			button.disabled = t.phase === 'decided';
			button.addEventListener('click', function () {
				choose(v.variant);
			});
			return button;
		});
		return [
			el('h2', { text: 'A/B test' }),
			el('p', { 'data-testid': 'ab-phase', text: phase }),
			table,
			el('p', { class: 'note', 'data-testid': 'ab-rule' }, [
				'Rule: ' +
					t.rule +
					' (critical z ' +
					t.figures.critical_z +
					'). Now: ' +
					(t.figures.verdict === 'winner'
						? 'variant ' + t.figures.leader + ' wins.'
						: 'a tie (' + t.figures.why + ').'),
			]),
			el('div', { class: 'actions' }, buttons),
		];
	}

	function open(app, id) {
		var latest = null;
		var chart = null;
		var path = '/api/campaigns/' + encodeURIComponent(id);
		var title = el('span', { 'data-testid': 'campaign-title', text: 'Campaign ' + id });
		var badgeBox = el('span');
		var meta = el('p', { class: 'meta' });
		var lastError = el('div');
		var barBox = el('div');
		var counts = el('div');
		var funnelBox = el('div');
		var abBox = el('div', { 'data-testid': 'ab-test' });
		var note = el('p', { class: 'note', 'data-testid': 'action-message', 'aria-live': 'polite' });
		var buttons = {
			start: el('button', { type: 'button', 'data-testid': 'start' }, ['Start']),
			pause: el('button', { type: 'button', 'data-testid': 'pause' }, ['Pause']),
			resume: el('button', { type: 'button', 'data-testid': 'resume' }, ['Resume']),
			cancel: el('button', { type: 'button', class: 'danger', 'data-testid': 'cancel' }, ['Cancel…']),
			retry: el('button', { type: 'button', 'data-testid': 'retry-not-sent' }, ['Retry not sent…']),
			delete: el('button', { type: 'button', class: 'danger', 'data-testid': 'delete' }, ['Delete…']),
			reconcile: el('button', { type: 'button', 'data-testid': 'reconcile' }, ['Reconcile unknown']),
		};
		var chartBox = el('div', { class: 'chart', 'data-testid': 'rate-chart' });
		var waiting = el('p', { class: 'waiting', 'data-testid': 'chart-waiting', text: 'Waiting for data…' });
		chartBox.appendChild(waiting);
		var errorsBox = el('div');
		/** A scheduled campaign's time to its start, ticking each second between the page's refreshes. */
		var countdown = null;
		function tickCountdown() {
			if (!countdown) return;
			var seconds = Math.ceil((Date.parse(latest.start_at) - Date.now()) / 1000);
			countdown.textContent = seconds > 0 ? 'in ' + C.spoken(seconds) : 'due now';
		}
		var clock = setInterval(tickCountdown, 1000);

		function say(text, isError) {
			note.className = isError ? 'note error' : 'note';
			note.textContent = text;
		}
		function post(action, body, done) {
			return C.api(action === 'rate' ? 'PUT' : 'POST', path + '/' + action, body)
				.then(function (answer) {
					if (done) say(done(answer));
					refresh().catch(failed);
				})
				.catch(function (error) {
					say(C.errorText(error), true);
				});
		}

		function abTest(t) {
			return abTestView(t, function (variant) {
				post('choose', { variant: variant }, function (a) {
					return 'Variant ' + a.variant + ' chosen: the remainder gets it.';
				});
			});
		}

		buttons.start.addEventListener('click', function () {
			post('start', undefined, function (a) {
				return (a.test_send ? 'Test sent to ' + a.test_send.to + ', then started: ' : 'Started: ') + a.state + '.';
			});
		});
		buttons.pause.addEventListener('click', function () {
			post('pause');
		});
		buttons.resume.addEventListener('click', function () {
			post('resume');
		});
		buttons.reconcile.addEventListener('click', function () {
			post('reconcile', undefined, function (a) {
				return 'Reconciled: ' + a.sent + ' sent, ' + a.not_sent + ' not sent, ' + a.still_unknown + ' still unknown.';
			});
		});
		// The counts are read again at each refresh while the dialog is open: it asks about the campaign as it is now.
		function pending() {
			return latest.counts.pending + latest.counts.claimed;
		}
		buttons.cancel.addEventListener('click', function () {
			C.confirm(
				'Cancel this campaign?',
				function () {
					return (
						C.plural(pending(), 'pending recipient') +
						' will not be sent (messages already on their way finish). This cannot be undone.'
					);
				},
				function () {
					return 'Cancel ' + C.plural(pending(), 'recipient');
				},
			).then(function (ok) {
				if (ok)
					post('cancel', undefined, function (a) {
						return 'Cancelled: ' + C.plural(a.cancelled, 'recipient') + ' will not be sent.';
					});
			});
		});
		buttons.retry.addEventListener('click', function () {
			C.confirm(
				'Send again the recipients not sent?',
				function () {
					var n = latest.counts.not_sent;
					return (
						C.plural(n, 'recipient') +
						(n === 1 ? ' was' : ' were') +
						' proven not sent; they are sent again, the others are left as they are.'
					);
				},
				function () {
					return 'Retry ' + latest.counts.not_sent;
				},
			).then(function (ok) {
				if (ok)
					post('retry-not-sent', undefined, function (a) {
						return C.plural(a.requeued, 'recipient') + ' queued again.';
					});
			});
		});

		buttons.delete.addEventListener('click', function () {
			C.confirm(
				'Delete this campaign?',
				'Its recipients, ledger, report and delivery tracking leave Redis for good: download the report ' +
					'first to keep it. This cannot be undone.',
				'Delete',
			).then(function (ok) {
				if (!ok) return;
				C.api('DELETE', path)
					.then(function () {
						location.hash = '#/';
					})
					.catch(function (error) {
						say(C.errorText(error), true);
					});
			});
		});

		var rateInput = el('input', {
			type: 'number',
			min: '1',
			step: '1',
			required: true,
			'data-testid': 'rate-input',
			'aria-label': 'sends per second',
		});
		var rateForm = el('form', { class: 'inline', 'data-testid': 'rate-form' }, [
			el('label', {}, ['Rate ', rateInput, ' sends/s']),
			el('button', { type: 'submit', 'data-testid': 'rate-set' }, ['Set rate']),
		]);
		rateForm.addEventListener('submit', function (event) {
			event.preventDefault();
			post('rate', { rate: Number(rateInput.value) }, function (a) {
				return 'Rate set to ' + a.rate + '/s.';
			});
		});

		var phoneInput = el('input', {
			type: 'search',
			required: true,
			'data-testid': 'find-phone',
			placeholder: '+49 151 1234567',
			'aria-label': 'phone',
		});
		var found = el('div', { 'data-testid': 'recipient-result', 'aria-live': 'polite' });
		var findForm = el('form', { class: 'inline', 'data-testid': 'find-form' }, [
			el('label', {}, ['Recipient ', phoneInput]),
			el('button', { type: 'submit', 'data-testid': 'find-submit' }, ['Find']),
		]);
		findForm.addEventListener('submit', function (event) {
			event.preventDefault();
			found.replaceChildren();
			C.api('GET', path + '/report?phone=' + encodeURIComponent(phoneInput.value))
				.then(function (rows) {
					var r = rows[0];
					var fields = [
						['line', r.line],
						['phone', r.phone],
						['outcome', r.outcome],
						['message id', r.message_id],
						['error', r.error],
						['attempts', r.attempts],
						['first attempt', r.first_attempt_at],
						['last attempt', r.last_attempt_at],
					];
					found.replaceChildren(
						el(
							'dl',
							{ class: 'recipient' },
							fields.reduce(function (list, f) {
								return list.concat([
									el('dt', { text: f[0] }),
									el('dd', {
										'data-testid': 'recipient-' + f[0].replace(' ', '-'),
										text: f[1] === null ? '—' : String(f[1]),
									}),
								]);
							}, []),
						),
					);
				})
				.catch(function (error) {
					found.replaceChildren(el('p', { class: 'error', 'data-testid': 'find-error', text: C.errorText(error) }));
				});
		});

		app.replaceChildren(
			el('p', {}, [el('a', { href: '#/', text: '← Campaigns' })]),
			el('h1', {}, [title, badgeBox]),
			C.created[id] ? C.views.create.summary(C.created[id]) : el('span'),
			meta,
			lastError,
			barBox,
			counts,
			el('h2', { text: 'Delivery funnel' }),
			funnelBox,
			abBox,
			el('div', { class: 'actions' }, [
				buttons.start,
				buttons.pause,
				buttons.resume,
				buttons.cancel,
				buttons.retry,
				buttons.reconcile,
				buttons.delete,
				el(
					'a',
					{
						class: 'button',
						'data-testid': 'download',
						href: path + '/report?format=csv',
						download: 'campaign-' + id + '-report.csv',
					},
					['Download report'],
				),
			]),
			note,
			el('div', { class: 'tools' }, [rateForm, findForm]),
			found,
			el('h2', { text: 'Sends per second, last 10 minutes' }),
			chartBox,
			el('h2', { text: 'Not sent, by reason' }),
			errorsBox,
		);

		/** The chart as wide as its box's content (a phone's width included), 900 px at most. */
		function chartWidth() {
			var box = document.defaultView.getComputedStyle(chartBox);
			var inner = chartBox.clientWidth - parseFloat(box.paddingLeft) - parseFloat(box.paddingRight);
			return Math.min(900, inner > 0 ? inner : 900);
		}

		function drawChart(history, running) {
			var any = history.some(function (p) {
				return p[1] > 0;
			});
			// uPlot draws an empty frame until sends settle: say what the blank means instead.
			waiting.textContent = running ? 'Waiting for data…' : 'No sends in the last 10 minutes.';
			waiting.hidden = any;
			var data = [
				history.map(function (p) {
					return p[0];
				}),
				history.map(function (p) {
					return p[1];
				}),
			];
			if (!any || !window.uPlot) return;
			if (chart) chart.setData(data);
			else
				chart = new window.uPlot(
					{
						width: chartWidth(),
						height: 180,
						series: [{}, { label: 'sends/s', stroke: '#2b7a4b', fill: 'rgba(43,122,75,0.15)' }],
						axes: [{}, { label: 'sends/s' }],
						legend: { show: false },
					},
					data,
					chartBox,
				);
		}

		function refresh() {
			return Promise.all([
				C.api('GET', path),
				C.api('GET', path + '/rate-history'),
				C.api('GET', path + '/errors'),
			]).then(function (all) {
				var c = all[0],
					history = all[1],
					errors = all[2];
				var first = latest === null;
				latest = c;
				title.textContent = c.name ? c.name + ' (' + id + ')' : 'Campaign ' + id;
				badgeBox.replaceChildren(C.badge(c.state));
				// A campaign created with a start time shows it: when a scheduled one starts (and in how long), or was due.
				countdown = c.state === 'scheduled' && c.start_at ? el('span', { 'data-testid': 'start-countdown' }) : null;
				var start = c.start_at
					? [
							c.state === 'scheduled' ? ' · starts ' : ' · start ',
							el('time', {
								datetime: c.start_at,
								'data-testid': 'start-at',
								text: new Date(c.start_at).toLocaleString(),
							}),
						].concat(countdown ? [' (', countdown, ')'] : [])
					: [];
				// The template by the name the service gave it (after the first send), its id beside it on one line.
				var templateId = el('small', { class: 'id', 'data-testid': 'template-id', text: c.template_id });
				var template = c.template_name
					? [el('span', { 'data-testid': 'template-name', text: c.template_name }), ' ', templateId]
					: [templateId];
				meta.replaceChildren.apply(
					meta,
					['template ']
						.concat(template)
						.concat([
							' · from ' +
								c.from +
								' · limit ' +
								c.rate_limit +
								'/s · now ' +
								c.rate.toFixed(1) +
								'/s · ETA ' +
								C.eta(c.eta_seconds),
						])
						.concat(start),
				);
				tickCountdown();
				lastError.replaceChildren(
					c.waiting
						? el('p', { class: 'note', 'data-testid': 'waiting' }, [
								'Waiting for the ',
								el('a', { href: '#/budget', text: 'daily limit' }),
								': the next customer can be counted at ',
								el('time', { datetime: c.waiting.next_at, text: new Date(c.waiting.next_at).toLocaleString() }),
							])
						: el('span'),
					c.last_error
						? el('p', {
								class: 'error',
								'data-testid': 'last-error',
								text: (REFUSED[c.paused_reason] ? REFUSED[c.paused_reason] + ': ' : '') + c.last_error,
							})
						: el('span'),
				);
				barBox.replaceChildren(C.bar(c.counts, id), C.legend(c.counts));
				counts.replaceChildren(
					el(
						'dl',
						{ class: 'counts' },
						C.OUTCOMES.reduce(function (list, key) {
							return list.concat([
								el('dt', { text: key.replace('_', ' ') }),
								el('dd', { 'data-testid': 'count-' + key, text: String(c.counts[key]) }),
							]);
						}, []),
					),
				);
				funnelBox.replaceChildren(C.funnel(c.funnel));
				abBox.replaceChildren.apply(abBox, c.ab_test ? abTest(c.ab_test) : []);
				C.reword();
				buttons.start.disabled = c.state !== 'draft';
				buttons.pause.disabled = !(c.state === 'running' || c.state === 'scheduled');
				buttons.resume.disabled = c.state !== 'paused';
				buttons.cancel.disabled = CANCELLABLE.indexOf(c.state) < 0;
				buttons.retry.disabled = !(c.counts.not_sent > 0 && RETRYABLE.indexOf(c.state) >= 0);
				buttons.retry.textContent = 'Retry not sent (' + c.counts.not_sent + ')…';
				buttons.reconcile.disabled = !(c.counts.unknown > 0);
				buttons.delete.disabled = DELETABLE.indexOf(c.state) < 0;
				if (first) rateInput.value = String(c.rate_limit);
				drawChart(history, c.state === 'running' || c.state === 'scheduled');
				var rows = errors.map(function (e) {
					return el('tr', { 'data-testid': 'reason-row' }, [
						el('td', { text: e.outcome }),
						el('td', { text: (e.varies ? 'e.g. ' : '') + e.reason }),
						el('td', { text: String(e.count) }),
					]);
				});
				errorsBox.replaceChildren(
					rows.length ? C.table(['Outcome', 'Reason', 'Recipients'], rows) : el('p', { text: 'None.' }),
				);
			});
		}

		/**
		 * A refresh that failed: the page stays, with the reason where
		 * the acts answer (the first load fails as the list does).
		 */
		function failed(error) {
			if (latest === null) throw error;
			say('Not refreshed: ' + C.errorText(error), true);
		}

		return {
			refresh: function () {
				return refresh().catch(failed);
			},
			destroy: function () {
				clearInterval(clock);
				if (chart) chart.destroy();
			},
		};
	}

	C.views.campaign = { open: open };
	C.page({
		pattern: /^#\/campaigns\/([A-Za-z0-9_-]+)$/,
		open: function (element, match) {
			return open(element, match[1]);
		},
	});
})();
