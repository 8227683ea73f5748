// Runners: the runner processes alive on this Redis and prefix (their heartbeats) with the queues each
// works, and every queue's depth now with how many live processes work it: a queue no process works
// is said in red, since its jobs wait until one starts.
(function () {
	'use strict';
	var C = window.ConvoConsole;
	var el = C.el;

	function runnerTable(runners) {
		var rows = runners.map(function (r) {
			return el('tr', { 'data-testid': 'runner-row', 'data-id': r.id }, [
				el('td', { 'data-testid': 'runner-role', text: r.role }),
				el('td', { class: 'cut' }, [el('span', { class: 'clip', title: r.host, text: r.host })]),
				el('td', { 'data-testid': 'runner-pid', text: String(r.pid) }),
				el('td', { text: r.version }),
				el('td', {}, [C.when(r.started_at)]),
				el('td', {}, [C.when(r.last_beat_at)]),
				el(
					'td',
					{ 'data-testid': 'runner-queues' },
					r.queues.map(function (queue) {
						return el('code', { class: 'tag', text: queue });
					}),
				),
			]);
		});
		return C.table(['Role', 'Host', 'PID', 'Version', 'Started', 'Last heartbeat', 'Queues it works'], rows, {
			class: 'list cards runners-table',
			'data-testid': 'runner-table',
		});
	}

	function queueTable(queues) {
		var rows = queues.map(function (q) {
			var workedBy = q.runners
				? el('span', { text: C.plural(q.runners, 'process', 'processes') })
				: el('strong', { class: 'error', text: 'no process' });
			return el('tr', { 'data-testid': 'queue-row', 'data-name': q.name }, [
				el('td', {}, [el('code', { 'data-testid': 'queue-name', text: q.name }), q.paused ? ' (paused)' : '']),
				el('td', { class: 'number', 'data-testid': 'queue-waiting', text: String(q.waiting) }),
				el('td', { class: 'number', 'data-testid': 'queue-active', text: String(q.active) }),
				el('td', { class: 'number', 'data-testid': 'queue-delayed', text: String(q.delayed) }),
				el('td', { class: 'number', 'data-testid': 'queue-failed', text: String(q.failed) }),
				el('td', { class: 'number', 'data-testid': 'queue-completed', text: String(q.completed) }),
				el('td', { 'data-testid': 'queue-runners' }, [workedBy]),
			]);
		});
		return C.table(['Queue', 'Waiting', 'Active', 'Delayed', 'Failed (kept)', 'Completed (kept)', 'Worked by'], rows, {
			class: 'list cards queues-table',
			'data-testid': 'queue-table',
		});
	}

	function open(page) {
		var summary = el('p', { class: 'runners', 'data-testid': 'runners-summary' });
		var processes = el('div');
		var queues = el('div');
		var seen = 0;

		function refresh() {
			var asked = ++seen;
			return Promise.all([C.api('GET', '/api/runners'), C.api('GET', '/api/queues')]).then(function (all) {
				if (asked !== seen) return;
				var runners = all[0].runners;
				summary.className = runners.length ? 'runners' : 'runners none';
				summary.textContent = runners.length
					? C.plural(runners.length, 'runner process', 'runner processes') + ' alive on this Redis and prefix.'
					: 'No runner process is alive: campaigns and reindex runs wait until one starts.';
				processes.replaceChildren(runners.length ? runnerTable(runners) : el('span'));
				queues.replaceChildren(queueTable(all[1].queues));
			});
		}

		page.replaceChildren(
			el('h1', { text: 'Runners' }),
			summary,
			processes,
			el('h2', { text: 'Queues' }),
			el('p', {
				class: 'intro',
				text:
					'Jobs by state now. A send job holds up to 50 recipients; the control queue ticks every second, so ' +
					'its counts move. Queues (bull-board) shows each job.',
			}),
			queues,
		);
		return { refresh: refresh };
	}

	C.page({ pattern: /^#\/runners$/, open: open });
})();
