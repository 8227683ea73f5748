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

	/** A campaign as an operator picks it: its name (the id small beside it), when, what, from which number. */
	function campaignTable(items) {
		var rows = items.map(function (c) {
			var link = el('a', { href: '#/campaigns/' + c.id, 'data-testid': 'campaign-link' }, [c.name]);
			return el('tr', { 'data-testid': 'campaign-row' }, [
				el('td', {}, [link, ' ', el('small', { class: 'id', text: c.id })]),
				el('td', { 'data-testid': 'list-created', text: new Date(c.created_at).toLocaleString() }),
				// Only a campaign created with a start time has one of its own; the others started at their create.
				el('td', { 'data-testid': 'list-start' }, [
					c.start_at ? el('time', { datetime: c.start_at, text: new Date(c.start_at).toLocaleString() }) : '—',
				]),
				el('td', { 'data-testid': 'list-template', class: 'id', text: c.template_id }),
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
		return C.table(headers, rows);
	}

	function show(app) {
		return Promise.all([
			C.api('GET', '/api/campaigns?limit=100'),
			C.api('GET', '/api/reindex'),
			C.api('GET', '/api/runners'),
		]).then(function (all) {
			var page = all[0],
				reindex = all[1],
				alive = all[2].runners;
			// Nothing sends without a runner process: say how many are alive (their heartbeats), and where none is.
			var roles = alive
				.map(function (r) {
					return r.role + ' on ' + r.host + ' (pid ' + r.pid + ')';
				})
				.join(', ');
			var runners = el('p', {
				class: alive.length ? 'runners' : 'runners none',
				'data-testid': 'runners-alive',
				text: alive.length
					? alive.length + ' runner process' + (alive.length === 1 ? '' : 'es') + ' alive: ' + roles
					: 'No runner process is alive: campaigns and reindex runs wait until one starts.',
			});
			app.replaceChildren(
				runners,
				el('h1', {}, [
					'Campaigns',
					el('a', { class: 'button', href: '#/new', 'data-testid': 'new-campaign' }, ['New campaign']),
				]),
				page.items.length
					? campaignTable(page.items)
					: el('p', {
							text:
								'No campaign yet: create one with New campaign, ' +
								'convo-runner campaign create, or POST /api/campaigns.',
						}),
				el('h1', { text: 'Reindex runs' }),
				reindexTable(reindex),
			);
		});
	}

	C.views.list = { show: show };
})();
