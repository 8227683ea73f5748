// The business's daily messaging budget: the limit in force (set here or with `convo-runner budget
// set`, else RUNNER_DAILY_LIMIT, else none), the distinct customers counted in the rolling 24 hours
// and how many are left, when the next customer can be counted once the limit is reached; set a
// limit or `unlimited`, or clear it (asked in the page). Through /api/budget, as the CLI does.
(function () {
	'use strict';
	var C = window.ConvoConsole;
	var el = C.el;
	/** The API's names of the fields as this page labels them. */
	var LABELS = { limit: 'Daily limit' };
	var SOURCES = {
		set: 'set for the business (here, through the API or with convo-runner budget set)',
		default: 'the runner’s default (RUNNER_DAILY_LIMIT)',
		none: 'no limit is set, neither here nor as a default',
	};
	/** Campaigns read for the ones waiting for the limit. */
	var CAMPAIGNS_READ = 100;

	function say(node, text, isError) {
		node.className = isError ? 'note error' : 'note';
		node.textContent = text;
	}
	function plural(count, one, many) {
		return count + ' ' + (count === 1 ? one : many);
	}
	function hours(ms) {
		var whole = Math.floor(ms / 3600000);
		var rest = Math.round((ms - whole * 3600000) / 60000);
		return whole + ' h' + (rest ? ' ' + rest + ' min' : '');
	}

	function open(page) {
		var facts = el('dl', { class: 'recipient cap', 'data-testid': 'budget-current' });
		var limit = el('input', {
			name: 'limit',
			required: true,
			maxlength: '9',
			autocomplete: 'off',
			placeholder: '250',
			'aria-describedby': 'budget-syntax',
			'data-testid': 'budget-limit',
		});
		var setForm = el('form', { class: 'row-form', 'data-testid': 'budget-form' }, [
			el('div', { class: 'field' }, [el('label', {}, [LABELS.limit, limit])]),
			el('button', { type: 'submit', 'data-testid': 'budget-set', text: 'Set limit' }),
		]);
		var hint = el('div', { class: 'hint', id: 'budget-syntax' }, [
			el('p', {}, [
				'The distinct customers the business may start conversations with in a rolling 24 hours, across every ' +
					'number: the channel’s messaging limit (250, 2,000, 10,000, 100,000), a number up to 1,000,000, or ',
				el('code', { text: 'unlimited' }),
				'. A customer counted already within the 24 hours draws nothing more.',
			]),
		]);
		var clearButton = el('button', {
			type: 'button',
			class: 'danger',
			'data-testid': 'budget-clear',
			text: 'Clear the limit…',
		});
		var note = el('p', { class: 'note', 'data-testid': 'budget-note', 'aria-live': 'polite' });
		var waiting = el('div', { 'data-testid': 'budget-waiting' });

		function row(label, value, testid) {
			return [el('dt', { text: label }), el('dd', { 'data-testid': 'budget-value-' + testid, text: value })];
		}
		function show(answer) {
			var unlimited = answer.limit === 'unlimited';
			var rows = [
				row('Limit', unlimited ? 'unlimited' : plural(answer.limit, 'customer', 'customers') + ' a day', 'limit'),
				row('Where it comes from', SOURCES[answer.source] || answer.source, 'source'),
			];
			if (!unlimited) {
				rows.push(row('Counted now', plural(answer.used, 'customer', 'customers'), 'used'));
				rows.push(row('Left now', plural(answer.left, 'customer', 'customers'), 'left'));
				rows.push(
					row(
						'Next customer can be counted',
						answer.next_free_at ? new Date(answer.next_free_at).toLocaleString() : 'now',
						'next',
					),
				);
			}
			rows.push(row('Counted for', hours(answer.span_ms) + ' (24 h and a safety margin)', 'span'));
			facts.replaceChildren.apply(facts, [].concat.apply([], rows));
			clearButton.disabled = answer.source !== 'set';
		}
		function showWaiting(answer) {
			var held = answer.items.filter(function (campaign) {
				return campaign.waiting && campaign.waiting.reason === 'daily_limit';
			});
			if (!held.length) {
				waiting.replaceChildren(el('p', { class: 'meta', text: 'No campaign is waiting for the daily limit.' }));
				return;
			}
			waiting.replaceChildren(
				C.table(
					['Campaign', 'Waiting until'],
					held.map(function (campaign) {
						return el('tr', { 'data-testid': 'budget-waiting-campaign' }, [
							el('td', {}, [
								el('a', { href: '#/campaigns/' + encodeURIComponent(campaign.id), text: campaign.name || campaign.id }),
							]),
							el('td', { text: new Date(campaign.waiting.next_at).toLocaleString() }),
						]);
					}),
				),
			);
		}

		function refresh() {
			return Promise.all([
				C.api('GET', '/api/budget').then(function (answer) {
					show(answer);
					if (document.activeElement !== limit) limit.value = answer.source === 'set' ? String(answer.limit) : '';
				}),
				C.api('GET', '/api/campaigns?state=running&limit=' + CAMPAIGNS_READ).then(showWaiting, function () {}),
			]);
		}

		setForm.addEventListener('submit', function (event) {
			event.preventDefault();
			var text = limit.value.trim();
			var value = /^\d+$/.test(text) ? Number(text) : text;
			C.api('PUT', '/api/budget', { limit: value })
				.then(function (answer) {
					show(answer);
					say(
						note,
						answer.limit === 'unlimited'
							? 'No daily limit: every campaign sends at its rate alone.'
							: 'Daily limit set: ' + plural(answer.limit, 'customer', 'customers') + ', from the next send.',
					);
				})
				.catch(function (error) {
					say(note, C.errorText(error, LABELS), true);
				});
		});
		clearButton.addEventListener('click', function () {
			C.confirm('Clear the daily limit?', 'The runner’s default (RUNNER_DAILY_LIMIT) holds again, or none.', 'Clear')
				.then(function (ok) {
					if (!ok) return;
					return C.api('DELETE', '/api/budget').then(function (answer) {
						show(answer);
						limit.value = '';
						say(note, 'The limit is cleared: ' + (SOURCES[answer.source] || answer.source) + '.');
					});
				})
				.catch(function (error) {
					say(note, C.errorText(error, LABELS), true);
				});
		});

		page.replaceChildren(
			el('h1', { text: 'Daily budget' }),
			el('p', {
				class: 'meta',
				text:
					'One rolling 24-hour budget of distinct customers for everything the business sends: campaigns, cron ' +
					'runs and workflows that draw on it. Each send counts its customer; recipients over the limit wait ' +
					'and go out as counted customers drop out.',
			}),
			el('section', { class: 'panel', 'aria-label': 'The limit and the customers counted' }, [
				facts,
				setForm,
				hint,
				note,
				el('div', { class: 'actions' }, [clearButton]),
			]),
			el('section', { class: 'panel', 'aria-labelledby': 'budget-waiting-heading' }, [
				el('h2', { id: 'budget-waiting-heading', text: 'Campaigns waiting for the limit' }),
				waiting,
			]),
		);
		return { refresh: refresh };
	}

	C.page({ pattern: /^#\/budget$/, open: open, refreshMs: 5000 });
})();
