// The list: campaigns with what became of their recipients, the reindex runs, the runner processes alive.
(function () {
	'use strict';
	var C = window.ConvoConsole;
	var el = C.el;

	function reindexTable(reindex) {
		var rows = reindex.runs.map(function (run) {
			var seen = run.counts.read;
			var size = run.source_bytes.total;
			var progress = el('progress', {
				max: String(size || 1),
				value: String(size ? run.source_bytes.read : run.state === 'running' ? 0 : 1),
				'data-testid': 'reindex-progress-' + run.id,
			});
			return el('tr', { 'data-testid': 'reindex-row' }, [
				el('td', { text: run.id }),
				el('td', { text: run.collection }),
				el('td', {}, [C.badge(run.state)]),
				el('td', {}, [progress]),
				el('td', {
					text:
						seen +
						' read · ' +
						run.counts.unchanged +
						' unchanged · ' +
						(run.counts.created + run.counts.updated) +
						' upserted · ' +
						run.counts.deactivated +
						' deactivated · ' +
						run.counts.failed +
						' failed',
				}),
				el('td', { text: run.last_error || '' }),
			]);
		});
		if (!rows.length) return el('p', { text: 'No reindex run yet.' });
		return C.table(['Run', 'Collection', 'State', 'Source read', 'Items', 'Last error'], rows);
	}

	/** A funnel stage's share of sent, its count beside it ('—' while nothing is sent or tracking is off). */
	function funnelCell(f, stage) {
		var known = f && f.sent > 0 && f.tracking !== 'off';
		return el(
			'td',
			{ class: 'mini', 'data-testid': 'list-' + stage, title: f ? f[stage] + ' of ' + f.sent + ' sent' : '' },
			known ? [C.pct(f.rates[stage]), ' ', el('small', { text: String(f[stage]) })] : ['—'],
		);
	}

	/** Long text (an id, a UUID, a name) cut to its cell's width, the whole of it in the title. */
	function clipped(tag, text, attrs) {
		return el(tag, Object.assign({ class: 'clip', title: text, text: text }, attrs || {}));
	}

	/** The template: its name with its id small below it where the campaign keeps a name, else the id alone. */
	function templateCell(c) {
		var children = c.template_name
			? [clipped('span', c.template_name), clipped('small', c.template_id, { class: 'clip id' })]
			: [clipped('span', c.template_id, { class: 'clip id' })];
		return el('td', { 'data-testid': 'list-template', class: 'cut' }, children);
	}

	/** A campaign as an operator picks it: its name (the id small below), when, what, from which number. */
	function campaignTable(items) {
		var rows = items.map(function (c) {
			var link = el(
				'a',
				{ href: '#/campaigns/' + c.id, 'data-testid': 'campaign-link', class: 'clip', title: c.name },
				[c.name],
			);
			return el('tr', { 'data-testid': 'campaign-row' }, [
				el('td', { class: 'cut' }, [link, clipped('small', c.id, { class: 'clip id', 'data-testid': 'list-id' })]),
				el('td', { 'data-testid': 'list-created', text: new Date(c.created_at).toLocaleString() }),
				// Only a campaign created with a start time has one of its own; the others started at their create.
				el('td', { 'data-testid': 'list-start' }, [
					c.start_at ? el('time', { datetime: c.start_at, text: new Date(c.start_at).toLocaleString() }) : '—',
				]),
				templateCell(c),
				el('td', { 'data-testid': 'list-from', text: c.from }),
				el('td', {}, [C.badge(c.state)]),
				el('td', { class: 'wide' }, [C.bar(c.counts, c.id)]),
				el('td', { 'data-testid': 'list-sent', text: String(c.counts.sent) }),
				el('td', { 'data-testid': 'list-not-sent', text: String(C.notSent(c.counts)) }),
				el('td', { 'data-testid': 'list-unknown', text: String(c.counts.unknown) }),
				el('td', { 'data-testid': 'list-cancelled', text: String(c.counts.cancelled) }),
				el('td', { 'data-testid': 'list-rejected', text: String(c.counts.rejected) }),
				funnelCell(c.funnel, 'delivered'),
				funnelCell(c.funnel, 'read'),
				el('td', { text: c.rate.toFixed(1) + '/s' }),
				el('td', { text: C.eta(c.eta_seconds) }),
			]);
		});
		var headers = [
			'Campaign',
			'Created',
			'Start',
			'Template',
			'Number',
			'State',
			'Progress',
			'Sent',
			'Not sent',
			'Unknown',
			'Cancelled',
			'Rejected',
			'Delivered',
			'Read',
			'Rate',
			'ETA',
		];
		return C.table(headers, rows, { class: 'list campaigns' });
	}

	var PAGE_SIZE = 50;
	var STATES = ['draft', 'scheduled', 'running', 'paused', 'completed', 'cancelled', 'failed'];
	/** What the list shows: kept while the console is open, so coming back from a campaign finds the same page. */
	var query = { search: '', state: '', from: '', sort: 'created', offset: 0 };

	function queryPath() {
		var parts = ['limit=' + PAGE_SIZE, 'offset=' + query.offset, 'sort=' + query.sort];
		['search', 'state', 'from'].forEach(function (key) {
			if (query[key].trim()) parts.push(key + '=' + encodeURIComponent(query[key].trim()));
		});
		return '/api/campaigns?' + parts.join('&');
	}

	/** A field of the list's filters under its label (tied by id: the label names the field alone, not its options). */
	function filterField(label, control) {
		control.id = control.getAttribute('data-testid');
		return el('div', { class: 'field' }, [el('label', { for: control.id, text: label }), control]);
	}

	function option(value, text, selected) {
		return el('option', { value: value, text: text, selected: selected });
	}

	/**
	 * The list's controls (search, state, number, sort, pager), made once per visit: a refresh replaces only the
	 * rows and the count, so a field being typed in keeps its focus and its text.
	 */
	function open(page) {
		var seen = 0;
		var timer = null;
		var runners = el('p', { class: 'runners', 'data-testid': 'runners-alive' });
		var results = el('div', { 'data-testid': 'campaign-results' });
		var reindexPart = el('div');
		var count = el('span', { class: 'count', 'data-testid': 'list-count', 'aria-live': 'polite' });
		var previous = el('button', { type: 'button', 'data-testid': 'page-previous', text: 'Previous', disabled: true });
		var next = el('button', { type: 'button', 'data-testid': 'page-next', text: 'Next', disabled: true });
		var problem = el('p', { class: 'error', 'data-testid': 'list-error', role: 'alert' });
		var search = el('input', {
			type: 'search',
			'data-testid': 'list-search',
			value: query.search,
			maxlength: '200',
			placeholder: 'name or id',
		});
		var state = el(
			'select',
			{ 'data-testid': 'list-state' },
			[option('', 'Any state', query.state === '')].concat(
				STATES.map(function (s) {
					return option(s, s, query.state === s);
				}),
			),
		);
		var from = el('input', {
			type: 'search',
			'data-testid': 'list-number',
			value: query.from,
			maxlength: '40',
			placeholder: 'any number',
			inputmode: 'tel',
		});
		var sort = el('select', { 'data-testid': 'list-sort' }, [
			option('created', 'Newest first', query.sort === 'created'),
			option('state', 'By state', query.sort === 'state'),
		]);
		var filters = el('form', { class: 'filters', role: 'search', 'data-testid': 'list-filters' }, [
			filterField('Search', search),
			filterField('State', state),
			filterField('Number', from),
			filterField('Sort', sort),
			el('div', { class: 'pager' }, [previous, count, next]),
		]);

		function refresh() {
			var asked = ++seen;
			return Promise.all([C.api('GET', queryPath()), C.api('GET', '/api/reindex'), C.api('GET', '/api/runners')]).then(
				function (all) {
					// An answer to a query the operator has since changed is dropped: the newer one fills the page.
					if (asked !== seen) return;
					problem.textContent = '';
					showRunners(all[2].runners);
					showPage(all[0]);
					reindexPart.replaceChildren(reindexTable(all[1]));
				},
				function (error) {
					// Said above the list, which keeps its fields: the operator fixes a filter where it is.
					if (error.message === 'signed out') throw error;
					if (asked === seen) problem.textContent = C.errorText(error);
				},
			);
		}

		function showRunners(alive) {
			// Nothing sends without a runner process: say how many are alive (their heartbeats), and where none is.
			var roles = alive
				.map(function (r) {
					return r.role + ' on ' + r.host + ' (pid ' + r.pid + ')';
				})
				.join(', ');
			runners.className = alive.length ? 'runners' : 'runners none';
			runners.textContent = alive.length
				? alive.length + ' runner process' + (alive.length === 1 ? '' : 'es') + ' alive: ' + roles
				: 'No runner process is alive: campaigns and reindex runs wait until one starts.';
		}

		function showPage(answer) {
			var filtered = query.search.trim() || query.state || query.from.trim();
			var first = answer.items.length ? answer.offset + 1 : 0;
			count.textContent = answer.items.length
				? first + '–' + (answer.offset + answer.items.length) + ' of ' + answer.total
				: '0 of ' + answer.total;
			previous.disabled = answer.offset === 0;
			next.disabled = answer.offset + answer.items.length >= answer.total;
			if (answer.items.length) results.replaceChildren(campaignTable(answer.items));
			else if (filtered || answer.offset > 0)
				results.replaceChildren(el('p', { 'data-testid': 'no-match', text: 'No campaign matches these filters.' }));
			else
				results.replaceChildren(
					el('p', {
						text:
							'No campaign yet: create one with New campaign, ' +
							'convo-runner campaign create, or POST /api/campaigns.',
					}),
				);
		}

		/** A changed filter starts again at the first page; typing waits for a pause before it asks. */
		function changed(delay) {
			return function () {
				query.search = search.value;
				query.state = state.value;
				query.from = from.value;
				query.sort = sort.value;
				query.offset = 0;
				if (timer) clearTimeout(timer);
				timer = setTimeout(function () {
					timer = null;
					refresh().catch(function () {});
				}, delay);
			};
		}
		search.addEventListener('input', changed(300));
		from.addEventListener('input', changed(300));
		state.addEventListener('change', changed(0));
		sort.addEventListener('change', changed(0));
		filters.addEventListener('submit', function (event) {
			event.preventDefault();
			changed(0)();
		});
		function turn(step) {
			return function () {
				query.offset = Math.max(0, query.offset + step * PAGE_SIZE);
				refresh().catch(function () {});
			};
		}
		previous.addEventListener('click', turn(-1));
		next.addEventListener('click', turn(1));

		page.replaceChildren(
			runners,
			el('h1', {}, [
				'Campaigns',
				el('a', { class: 'button', href: '#/new', 'data-testid': 'new-campaign' }, ['New campaign']),
			]),
			filters,
			problem,
			results,
			el('h1', { text: 'Reindex runs' }),
			reindexPart,
		);
		return {
			refresh: refresh,
			destroy: function () {
				if (timer) clearTimeout(timer);
			},
		};
	}

	C.views.list = { open: open };
	C.page({ open: open });
})();
