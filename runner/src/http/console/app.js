// The console: a list of campaigns and a page per campaign, refreshed every 2 s from the API with
// the session cookie. Writes carry the CSRF token the server put in the page.
(function () {
	'use strict';
	var csrf = document.querySelector('meta[name="csrf-token"]').content;
	var app = document.getElementById('app');
	var timer = null;
	var chart = null;
	var OUTCOMES = ['sent', 'failed', 'unknown', 'not_sent', 'rejected', 'cancelled', 'pending', 'claimed'];

	function api(method, path, body) {
		var init = { method: method, headers: { accept: 'application/json' }, credentials: 'same-origin' };
		if (method !== 'GET') init.headers['x-csrf-token'] = csrf;
		if (body !== undefined) {
			init.headers['content-type'] = 'application/json';
			init.body = JSON.stringify(body);
		}
		return fetch(path, init).then(function (response) {
			if (response.status === 401) {
				location.href = '/login';
				throw new Error('signed out');
			}
			return response.json().then(function (json) {
				if (!response.ok) throw new Error(json.message || response.statusText);
				return json;
			});
		});
	}

	function el(tag, attrs, children) {
		var node = document.createElement(tag);
		Object.keys(attrs || {}).forEach(function (key) {
			if (key === 'text') node.textContent = attrs[key];
			else node.setAttribute(key, attrs[key]);
		});
		(children || []).forEach(function (child) {
			node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
		});
		return node;
	}

	function total(counts) {
		return OUTCOMES.reduce(function (sum, key) { return sum + (counts[key] || 0); }, 0);
	}
	function done(counts) {
		return total(counts) - counts.pending - counts.claimed;
	}
	function eta(seconds) {
		if (seconds === null) return '?';
		return seconds < 90 ? seconds + ' s' : Math.round(seconds / 60) + ' min';
	}
	function progress(counts, id) {
		var max = Math.max(1, total(counts));
		return el('progress', { max: String(max), value: String(done(counts)), 'data-testid': 'progress-' + id, title: done(counts) + ' of ' + total(counts) + ' final' });
	}
	function badge(state) {
		return el('span', { class: 'state ' + state, 'data-testid': 'state', text: state });
	}

	function reindexTable(reindex) {
		var rows = reindex.runs.map(function (run) {
			var seen = run.counts.read;
			var total = run.source_bytes.total;
			var bar = el('progress', { max: String(total || 1), value: String(total ? run.source_bytes.read : run.state === 'running' ? 0 : 1), 'data-testid': 'reindex-progress-' + run.id });
			return el('tr', { 'data-testid': 'reindex-row' }, [
				el('td', { text: run.id }),
				el('td', { text: run.collection }),
				el('td', {}, [badge(run.state)]),
				el('td', {}, [bar]),
				el('td', { text: seen + ' read · ' + run.counts.unchanged + ' unchanged · ' + (run.counts.created + run.counts.updated) + ' upserted · ' + run.counts.deactivated + ' deactivated · ' + run.counts.failed + ' failed' }),
				el('td', { text: run.last_error || '' }),
			]);
		});
		if (!rows.length) return el('p', { text: 'No reindex run yet.' });
		return el('table', { class: 'list' }, [
			el('thead', {}, [el('tr', {}, ['Run', 'Collection', 'State', 'Source read', 'Items', 'Last error'].map(function (h) { return el('th', { text: h }); }))]),
			el('tbody', {}, rows),
		]);
	}

	function showList() {
		Promise.all([api('GET', '/api/campaigns?limit=100'), api('GET', '/api/reindex'), api('GET', '/api/runners')]).then(function (all) {
			var page = all[0], reindex = all[1], alive = all[2].runners;
			var rows = page.items.map(function (c) {
				return el('tr', { 'data-testid': 'campaign-row' }, [
					el('td', {}, [el('a', { href: '#/campaigns/' + c.id, text: c.id })]),
					el('td', {}, [badge(c.state)]),
					el('td', {}, [progress(c.counts, c.id)]),
					el('td', { text: String(c.counts.sent) }),
					el('td', { text: String(c.counts.failed + c.counts.unknown + c.counts.not_sent) }),
					el('td', { text: c.rate.toFixed(1) + '/s' }),
					el('td', { text: eta(c.eta_seconds) }),
				]);
			});
			var table = el('table', { class: 'list' }, [
				el('thead', {}, [el('tr', {}, ['Campaign', 'State', 'Progress', 'Sent', 'Not sent', 'Rate', 'ETA'].map(function (h) { return el('th', { text: h }); }))]),
				el('tbody', {}, rows),
			]);
			// Nothing sends without a runner process: say how many are alive (their heartbeats), and where none is.
			var roles = alive.map(function (r) { return r.role + ' on ' + r.host + ' (pid ' + r.pid + ')'; }).join(', ');
			var runners = el('p', { class: alive.length ? 'runners' : 'runners none', 'data-testid': 'runners-alive', text: alive.length ? alive.length + ' runner process' + (alive.length === 1 ? '' : 'es') + ' alive: ' + roles : 'No runner process is alive: campaigns and reindex runs wait until one starts.' });
			app.replaceChildren(
				runners,
				el('h1', { text: 'Campaigns' }),
				rows.length ? table : el('p', { text: 'No campaign yet: create one with convo-runner campaign create, or POST /api/campaigns.' }),
				el('h1', { text: 'Reindex runs' }),
				reindexTable(reindex)
			);
		}).catch(showError);
	}

	function act(id, action) {
		return function () {
			api('POST', '/api/campaigns/' + id + '/' + action).then(function () { showCampaign(id); }).catch(showError);
		};
	}

	function showCampaign(id) {
		Promise.all([api('GET', '/api/campaigns/' + id), api('GET', '/api/campaigns/' + id + '/rate-history'), api('GET', '/api/campaigns/' + id + '/errors')]).then(function (all) {
			var c = all[0], history = all[1], errors = all[2];
			var counts = el('dl', { class: 'counts' }, OUTCOMES.reduce(function (list, key) {
				return list.concat([el('dt', { text: key.replace('_', ' ') }), el('dd', { 'data-testid': 'count-' + key, text: String(c.counts[key]) })]);
			}, []));
			var buttons = el('div', { class: 'actions' }, [
				el('button', { 'data-testid': 'pause', type: 'button' }, ['Pause']),
				el('button', { 'data-testid': 'resume', type: 'button' }, ['Resume']),
				el('button', { 'data-testid': 'cancel', type: 'button' }, ['Cancel']),
				el('button', { 'data-testid': 'reconcile', type: 'button' }, ['Reconcile unknown']),
				el('a', { class: 'button', 'data-testid': 'download', href: '/api/campaigns/' + id + '/report?format=csv', download: 'campaign-' + id + '-report.csv' }, ['Download report']),
			]);
			var map = { pause: c.state === 'running' || c.state === 'scheduled', resume: c.state === 'paused', cancel: ['running', 'paused', 'scheduled', 'draft'].indexOf(c.state) >= 0, reconcile: c.counts.unknown > 0 };
			Array.prototype.forEach.call(buttons.querySelectorAll('button'), function (button) {
				var action = button.getAttribute('data-testid');
				button.disabled = !map[action];
				button.addEventListener('click', act(id, action));
			});
			var errorRows = errors.map(function (e) { return el('tr', {}, [el('td', { text: e.outcome }), el('td', { text: e.reason }), el('td', { text: String(e.count) })]); });
			var chartBox = el('div', { class: 'chart', 'data-testid': 'rate-chart' });
			app.replaceChildren(
				el('p', {}, [el('a', { href: '#/', text: '← Campaigns' })]),
				el('h1', {}, ['Campaign ' + id + ' ', badge(c.state)]),
				el('p', { class: 'meta', text: 'template ' + c.template_id + ' · from ' + c.from + ' · limit ' + c.rate_limit + '/s · now ' + c.rate.toFixed(1) + '/s · ETA ' + eta(c.eta_seconds) }),
				c.last_error ? el('p', { class: 'error', 'data-testid': 'last-error', text: c.last_error }) : el('span'),
				progress(c.counts, id), counts, buttons,
				el('h2', { text: 'Sends per second, last 10 minutes' }), chartBox,
				el('h2', { text: 'Not sent, by reason' }),
				errorRows.length ? el('table', { class: 'list' }, [el('thead', {}, [el('tr', {}, ['Outcome', 'Reason', 'Recipients'].map(function (h) { return el('th', { text: h }); }))]), el('tbody', {}, errorRows)]) : el('p', { text: 'None.' })
			);
			var data = [history.map(function (p) { return p[0]; }), history.map(function (p) { return p[1]; })];
			if (window.uPlot) {
				chart = new window.uPlot({ width: Math.min(900, app.clientWidth || 900), height: 180, series: [{}, { label: 'sends/s', stroke: '#2b7a4b', fill: 'rgba(43,122,75,0.15)' }], axes: [{}, { label: 'sends/s' }], legend: { show: false } }, data, chartBox);
			}
		}).catch(showError);
	}

	function showError(error) {
		if (error.message !== 'signed out') app.replaceChildren(el('p', { class: 'error', text: error.message }));
	}

	function route() {
		if (timer) clearInterval(timer);
		if (chart) { chart.destroy(); chart = null; }
		var match = /^#\/campaigns\/([A-Za-z0-9_-]+)$/.exec(location.hash);
		var show = match ? function () { if (chart) { chart.destroy(); chart = null; } showCampaign(match[1]); } : showList;
		show();
		timer = setInterval(show, 2000);
	}
	window.addEventListener('hashchange', route);
	route();
})();
