// A sending number's frequency cap: what holds for it (its own policy, else the business default
// RUNNER_FREQUENCY_CAP, else none), set (the policy's syntax told beside the field) and cleared
// (asked in the page), through /api/numbers/:from/cap as `convo-runner cap` does; and the number's
// daily counts (/api/numbers/:from/daily): what it sent and what the service refused, per day. The numbers the
// runner's campaigns send from are offered; any other can be typed. The number is in the address
// (#/cap/<number>), so a page of one number can be bookmarked.
(function () {
	'use strict';
	var C = window.ConvoConsole;
	var el = C.el;
	/** The API's names of the fields as this page labels them. */
	var LABELS = { from: 'Sending number', policy: 'Cap policy' };
	var WHERE = {
		number: 'its own cap',
		default: 'the business default (RUNNER_FREQUENCY_CAP)',
		none: 'no cap is set, neither its own nor a default',
	};
	/** Newest campaigns read for the numbers they send from. */
	var CAMPAIGNS_READ = 100;

	function field(label, input) {
		return el('div', { class: 'field' }, [el('label', {}, [label, input])]);
	}
	function policyText(policy) {
		return policy === 'none' ? 'no frequency cap' : 'at most ' + policy + ' per phone';
	}
	function numberOf(match) {
		try {
			return decodeURIComponent(match[1] || '');
		} catch {
			// A malformed escape: the address as typed, which the runner then refuses naming the field.
			return match[1];
		}
	}

	/** The policy's syntax, next to its field: what the runner accepts (capRules.ts). */
	function syntax(id) {
		var code = function (text) {
			return el('code', { text: text });
		};
		return el('div', { class: 'hint', id: id, 'data-testid': 'cap-syntax' }, [
			el('p', {}, [
				'Rules separated by commas, each at most N messages per period: ',
				code('1/24h'),
				' is one a day; ',
				code('1/24h,3/7d'),
				' one a day and three a week (every rule holds).',
			]),
			el('p', {}, [
				'Units ',
				code('s'),
				', ',
				code('m'),
				', ',
				code('h'),
				', ',
				code('d'),
				'; 1 to 100 messages and 1s to 366d per rule; up to 5 rules, one per period. ',
				code('none'),
				': no cap for this number, whatever the default.',
			]),
		]);
	}

	function open(page, match) {
		var number = numberOf(match);
		var view = null;
		var chooser = el('input', {
			name: 'from',
			required: true,
			maxlength: '40',
			inputmode: 'tel',
			autocomplete: 'off',
			value: number,
			'data-testid': 'cap-number',
		});
		var known = el('p', { class: 'meta', 'data-testid': 'cap-known' });
		var chooserNote = el('p', { class: 'note', 'data-testid': 'cap-number-error', 'aria-live': 'polite' });
		var current = el('dl', { class: 'recipient cap', 'data-testid': 'cap-current' });
		var policy = el('input', {
			name: 'policy',
			required: true,
			maxlength: '100',
			autocomplete: 'off',
			placeholder: '1/24h,3/7d',
			'aria-describedby': 'cap-syntax',
			'data-testid': 'cap-policy',
		});
		var setButton = el('button', { type: 'submit', 'data-testid': 'cap-set', text: 'Set cap' });
		var clearButton = el('button', {
			type: 'button',
			class: 'danger',
			'data-testid': 'cap-clear',
			text: 'Clear its own cap…',
		});
		var note = el('p', { class: 'note', 'data-testid': 'cap-note', 'aria-live': 'polite' });
		var setForm = el('form', { class: 'row-form', 'data-testid': 'cap-form' }, [
			field(LABELS.policy, policy),
			setButton,
		]);
		var panel = el('section', { class: 'panel', 'aria-label': 'The cap of the number', hidden: true }, [
			current,
			setForm,
			syntax('cap-syntax'),
			note,
			el('div', { class: 'actions' }, [clearButton]),
		]);
		var dailyTable = el('div', { 'data-testid': 'daily-counts' });
		var daily = el('section', { class: 'panel', 'aria-labelledby': 'daily-heading', hidden: true }, [
			el('h2', { id: 'daily-heading', text: 'Sends per day' }),
			el('p', {
				class: 'meta',
				text:
					'Recipients of its campaigns the service accepted (sent) and refused, per day in UTC, the last 8 days. ' +
					'Counted when each send settles.',
			}),
			dailyTable,
		]);

		function say(node, text, isError) {
			node.className = isError ? 'note error' : 'note';
			node.textContent = text;
		}
		function path() {
			return '/api/numbers/' + encodeURIComponent(view ? view.from : number) + '/cap';
		}
		function show(answer) {
			view = answer;
			panel.hidden = false;
			var rows = [
				['Number', answer.from],
				['Cap now', policyText(answer.policy)],
				['Where it comes from', WHERE[answer.source] || answer.source],
				['Its own cap', answer.number_policy || 'none set'],
				['Business default', answer.default_policy || 'none'],
			];
			current.replaceChildren.apply(
				current,
				rows.reduce(function (nodes, row) {
					return nodes.concat([
						el('dt', { text: row[0] }),
						el('dd', { 'data-testid': 'cap-value-' + slug(row[0]), text: row[1] }),
					]);
				}, []),
			);
			clearButton.disabled = answer.source !== 'number';
		}
		function slug(text) {
			return text.toLowerCase().replace(/\W+/g, '-');
		}

		function showDaily(answer) {
			daily.hidden = false;
			dailyTable.replaceChildren(
				C.table(
					['Day (UTC)', 'Sent', 'Refused'],
					answer.days.map(function (day) {
						return el('tr', { 'data-testid': 'daily-day' }, [
							el('td', { text: day.date }),
							el('td', { text: String(day.sent) }),
							el('td', { text: String(day.failed) }),
						]);
					}),
				),
			);
		}

		function refresh() {
			var numbers = C.api('GET', '/api/campaigns?limit=' + CAMPAIGNS_READ).then(showKnown, function () {});
			if (!number) return numbers;
			var counts = C.api('GET', '/api/numbers/' + encodeURIComponent(number) + '/daily').then(showDaily, function () {
				// The cap's answer below says what is wrong with the number.
			});
			var cap = C.api('GET', path()).then(
				function (answer) {
					show(answer);
					policy.value = answer.number_policy || '';
				},
				function (error) {
					if (error.message !== 'signed out') say(chooserNote, C.errorText(error, LABELS), true);
				},
			);
			return Promise.all([numbers, cap, counts]);
		}
		function showKnown(answer) {
			var froms = [];
			answer.items.forEach(function (campaign) {
				if (froms.indexOf(campaign.from) < 0) froms.push(campaign.from);
			});
			if (!froms.length) {
				known.textContent = 'No campaign yet: type the number your campaigns will send from.';
				return;
			}
			known.replaceChildren.apply(
				known,
				['Numbers your campaigns send from: '].concat(
					froms.map(function (from) {
						return el('a', {
							href: '#/cap/' + encodeURIComponent(from),
							class: 'number',
							'data-testid': 'cap-known-number',
							'aria-current': from === (view ? view.from : number) ? 'page' : undefined,
							text: from,
						});
					}),
				),
			);
		}

		var chooseForm = el('form', { class: 'row-form', 'data-testid': 'cap-choose' }, [
			field(LABELS.from, chooser),
			el('button', { type: 'submit', 'data-testid': 'cap-show', text: 'Show' }),
		]);
		chooseForm.addEventListener('submit', function (event) {
			event.preventDefault();
			var target = '#/cap/' + encodeURIComponent(chooser.value.trim());
			if (location.hash === target) refresh();
			else location.hash = target;
		});
		setForm.addEventListener('submit', function (event) {
			event.preventDefault();
			C.api('PUT', path(), { policy: policy.value.trim() })
				.then(function (answer) {
					show(answer);
					say(note, 'Cap set: ' + policyText(answer.policy) + ', from the next send of every campaign.');
				})
				.catch(function (error) {
					say(note, C.errorText(error, LABELS), true);
				});
		});
		clearButton.addEventListener('click', function () {
			var fallback = view.default_policy
				? 'the default ' + view.default_policy + ' holds for it again.'
				: 'no cap holds for it then (no default is set).';
			C.confirm(
				'Clear the cap of ' + view.from + '?',
				'Its own cap ' + view.number_policy + ' is removed: ' + fallback,
				'Clear',
			)
				.then(function (ok) {
					if (!ok) return;
					return C.api('DELETE', path()).then(function (answer) {
						show(answer);
						policy.value = '';
						say(note, 'Its own cap is cleared: ' + policyText(answer.policy) + ' now.');
					});
				})
				.catch(function (error) {
					say(note, C.errorText(error, LABELS), true);
				});
		});

		page.replaceChildren(
			el('h1', { text: 'Frequency cap' }),
			el('p', {
				class: 'meta',
				text:
					'At most N campaign messages per phone per period, across every campaign a number sends, scheduled ones ' +
					'too. A number’s own cap wins over the business default; a change holds from the next send.',
			}),
			chooseForm,
			chooserNote,
			known,
			panel,
			daily,
		);
		return { refresh: refresh };
	}

	C.page({ pattern: /^#\/cap(?:\/(.*))?$/, open: open, refreshMs: 0 });
})();
