// The campaign cron schedules: each with its pattern and time zone, its next run (and the time to it),
// the campaigns its firings made (linked to their pages), its delivery funnel across them; pause,
// resume, and remove (asked in the page first). Each schedule's card is built once and refreshed in
// place, so a button the operator focused keeps its focus.
(function () {
	'use strict';
	var C = window.ConvoConsole;
	var el = C.el;
	var PATH = '/api/campaigns/schedules';

	function localTime(iso) {
		return el('time', { datetime: iso, text: new Date(iso).toLocaleString() });
	}

	/** A term and its value in a card's settings. */
	function fact(term, testId, value) {
		return [el('dt', { text: term }), el('dd', { 'data-testid': testId }, value)];
	}

	/** The campaigns a schedule made, newest first, as rows linked to their pages. */
	function runsPart(s) {
		if (!s.runs.length) return el('p', { class: 'note', 'data-testid': 'schedule-no-runs', text: 'No run yet.' });
		var rows = s.runs.map(function (run) {
			return el('tr', { 'data-testid': 'schedule-run' }, [
				el('td', { class: 'cut' }, [
					el(
						'a',
						{ href: '#/campaigns/' + run.id, class: 'clip', 'data-testid': 'schedule-run-link', title: run.name },
						[run.name],
					),
					el('small', { class: 'clip id', text: run.id, title: run.id }),
				]),
				el('td', { text: new Date(run.created_at).toLocaleString() }),
				el('td', {}, [C.badge(run.state)]),
			]);
		});
		var more =
			s.run_count > s.runs.length
				? el('p', {
						class: 'note',
						text:
							'The newest ' +
							s.runs.length +
							' of ' +
							s.run_count +
							': search the campaign list for ' +
							s.id +
							' to see them all.',
					})
				: el('span');
		return el('div', {}, [C.table(['Campaign', 'Started', 'State'], rows, { class: 'list runs' }), more]);
	}

	/**
	 * One schedule's card. `act(schedule, action)` pauses, resumes or removes it; `update(s)` shows
	 * the schedule as the API answers it now.
	 */
	function card(id, act) {
		var latest = null;
		var titleId = 'schedule-title-' + id;
		var name = el('span', { 'data-testid': 'schedule-name' });
		var badgeBox = el('span');
		var facts = el('dl', { class: 'facts' });
		var countdown = el('span', { 'data-testid': 'schedule-countdown' });
		var runsHeading = el('h3', { 'data-testid': 'schedule-runs-heading' });
		var runsBox = el('div');
		var funnelBox = el('div');
		var buttons = {
			pause: el('button', { type: 'button', 'data-testid': 'schedule-pause' }, ['Pause']),
			resume: el('button', { type: 'button', 'data-testid': 'schedule-resume' }, ['Resume']),
			remove: el('button', { type: 'button', class: 'danger', 'data-testid': 'schedule-remove' }, ['Remove…']),
		};
		Object.keys(buttons).forEach(function (action) {
			buttons[action].addEventListener('click', function () {
				act(latest, action);
			});
		});
		var node = el('section', { class: 'schedule', 'data-testid': 'schedule-' + id, 'aria-labelledby': titleId }, [
			el('h2', { id: titleId }, [name, badgeBox]),
			facts,
			el('div', { class: 'actions' }, [buttons.pause, buttons.resume, buttons.remove]),
			runsHeading,
			runsBox,
			el('h3', { text: 'Delivery funnel across its runs' }),
			funnelBox,
		]);

		/** The time to the next run, ticking each second between refreshes. */
		function tick() {
			if (!latest || latest.next_run_at === null) return;
			var seconds = Math.ceil((Date.parse(latest.next_run_at) - Date.now()) / 1000);
			countdown.textContent = seconds > 0 ? 'in ' + C.spoken(seconds) : 'due now';
		}

		function update(s) {
			latest = s;
			name.textContent = s.name || 'Schedule ' + s.id;
			badgeBox.replaceChildren(C.badge(s.state));
			var next =
				s.state === 'paused'
					? ['none while paused (since ', localTime(s.paused_at), ')']
					: s.next_run_at === null
						? ['none: the pattern names no time left']
						: [localTime(s.next_run_at), ' (', countdown, ')'];
			facts.replaceChildren.apply(
				facts,
				[]
					.concat(fact('Id', 'schedule-id', [s.id]))
					.concat(fact('Repeats', 'schedule-cron', [el('code', { text: s.cron }), ' in ' + s.tz]))
					.concat(fact('Next run', 'schedule-next', next))
					.concat(fact('Template', 'schedule-template', [s.template_id]))
					.concat(fact('Number', 'schedule-from', [s.from]))
					.concat(fact('Recipients', 'schedule-source', [s.source]))
					.concat(fact('Created', 'schedule-created', [localTime(s.created_at)])),
			);
			tick();
			buttons.pause.disabled = s.state !== 'active';
			buttons.resume.disabled = s.state !== 'paused';
			runsHeading.textContent = 'Runs (' + s.run_count + ')';
			runsBox.replaceChildren(runsPart(s));
			funnelBox.replaceChildren(
				s.run_count ? C.funnel(s.funnel) : el('p', { class: 'note', text: 'No delivery funnel until its first run.' }),
			);
		}

		return { node: node, update: update, tick: tick };
	}

	function open(page) {
		var cards = {};
		var list = el('div', { class: 'schedules', 'data-testid': 'schedule-list' });
		var note = el('p', { class: 'note', 'data-testid': 'schedule-message', 'aria-live': 'polite' });
		var clock = setInterval(function () {
			Object.keys(cards).forEach(function (id) {
				cards[id].tick();
			});
		}, 1000);

		function say(text, isError) {
			note.className = isError ? 'note error' : 'note';
			note.textContent = text;
		}

		function send(method, path, done) {
			return C.api(method, path)
				.then(function (answer) {
					say(done(answer));
					return refresh();
				})
				.catch(function (error) {
					if (error.message !== 'signed out') say(C.errorText(error), true);
				});
		}

		function act(s, action) {
			var path = PATH + '/' + encodeURIComponent(s.id);
			var named = s.name ? '"' + s.name + '"' : s.id;
			if (action === 'pause')
				return send('POST', path + '/pause', function () {
					return 'Schedule ' + named + ' paused: it starts no campaign until resumed.';
				});
			if (action === 'resume')
				return send('POST', path + '/resume', function (answer) {
					return (
						'Schedule ' +
						named +
						' resumed' +
						(answer.next_run_at === null ? '.' : ': next run ' + new Date(answer.next_run_at).toLocaleString() + '.')
					);
				});
			return C.confirm(
				'Remove this schedule?',
				'It starts no more campaigns. The ' +
					C.plural(s.run_count, 'campaign') +
					' it started stay. This cannot be undone.',
				'Remove schedule',
			).then(function (ok) {
				if (ok)
					return send('DELETE', path, function () {
						return 'Schedule ' + named + ' removed.';
					});
			});
		}

		function refresh() {
			return C.api('GET', PATH).then(function (answer) {
				var shown = {};
				var nodes = answer.schedules.map(function (s) {
					shown[s.id] = true;
					cards[s.id] = cards[s.id] || card(s.id, act);
					cards[s.id].update(s);
					return cards[s.id].node;
				});
				Object.keys(cards).forEach(function (id) {
					if (!shown[id]) delete cards[id];
				});
				// Cards already in place are left there (their focus with them); a new or removed one changes the list.
				var same =
					nodes.length === list.children.length &&
					nodes.every(function (node, i) {
						return list.children[i] === node;
					});
				if (!same)
					list.replaceChildren.apply(
						list,
						nodes.length
							? nodes
							: [
									el('p', {
										'data-testid': 'no-schedules',
										text:
											'No schedule yet: give New campaign a Repeat (cron) and a recipients URL, ' +
											'or use convo-runner campaign create --cron.',
									}),
								],
					);
			});
		}

		page.replaceChildren(
			el('h1', {}, [
				'Campaign schedules',
				el('a', { class: 'button', href: '#/new', 'data-testid': 'new-campaign' }, ['New campaign']),
			]),
			el('p', {
				class: 'intro',
				text:
					'Each firing of a schedule re-reads its recipients and starts a campaign of its own. ' +
					'Times are in your browser\u2019s time zone; the pattern is read in the schedule\u2019s.',
			}),
			note,
			list,
		);
		return {
			refresh: refresh,
			destroy: function () {
				clearInterval(clock);
			},
		};
	}

	C.page({ pattern: /^#\/schedules$/, open: open, refreshMs: 5000 });
})();
