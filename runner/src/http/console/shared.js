// Helpers every view of the console shares: API calls with the session cookie (writes carry the
// CSRF token the server put in the page), building elements, state badges, the composition bar,
// and the in-page confirmation dialog. Views register on window.ConvoConsole.
(function () {
	'use strict';
	var csrf = document.querySelector('meta[name="csrf-token"]').content;
	var OUTCOMES = [
		'sent',
		'failed',
		'unknown',
		'not_sent',
		'capped',
		'rejected',
		'suppressed',
		'cancelled',
		'expired',
		'pending',
		'claimed',
	];

	/** `body`: a JSON value, or { raw, type } sent as it is (a CSV upload). */
	function api(method, path, body) {
		var init = { method: method, headers: { accept: 'application/json' }, credentials: 'same-origin' };
		if (method !== 'GET') init.headers['x-csrf-token'] = csrf;
		if (body && body.raw !== undefined) {
			init.headers['content-type'] = body.type;
			init.body = body.raw;
		} else if (body !== undefined) {
			init.headers['content-type'] = 'application/json';
			init.body = JSON.stringify(body);
		}
		return fetch(path, init).then(function (response) {
			if (response.status === 401) {
				location.href = '/login';
				throw new Error('signed out');
			}
			// No content (a removal's 204): nothing to read.
			if (response.status === 204) return null;
			return response.json().then(function (json) {
				if (!response.ok) throw Object.assign(new Error(json.message || response.statusText), { field: json.field });
				return json;
			});
		});
	}

	/** The API's field names as the console's forms label them: the forms take their labels from here, errors too. */
	var LABELS = {
		name: 'Name',
		source_url: 'Recipients (URL)',
		template_id: 'Template id',
		from: 'Number (from)',
		rate: 'Rate (sends per second)',
		at: 'Start at',
		cron: 'Repeat (cron)',
		tz: 'Time zone of the cron',
		window: 'Send window',
		end_at: 'End at',
		variants: 'Variants',
		test_share: 'Test share',
		pick_by: 'Pick the winner by',
		decide_after: 'Decide after',
		if_tie: 'If no variant wins',
		seed: 'Seed',
	};
	// Names no sentence uses as words: replaced wherever an error mentions them. The others (from, at, rate, ...)
	// only where the error starts with the field it is about, or where they stand alone in brackets.
	var NAME_LIKE = /^(?:\w+_\w+|cron|tz)$/;
	// The API's advice to its own clients: the console builds the query string itself.
	var UPLOAD_HINT = / \(give the settings in the query string of an upload\)$/;

	function own(labels, name) {
		return Object.prototype.hasOwnProperty.call(labels, name) ? labels[name] : undefined;
	}

	/**
	 * An error's text for the operator: the API's field names replaced by the labels of the form. `formLabels`: a
	 * form's own labels of the API's names (a page whose field the API calls `id` or `policy`), before the shared ones;
	 * a field of a list (`events.0`) is named by its list's label.
	 */
	function errorText(error, formLabels) {
		var labelOf = function (name) {
			return own(formLabels || {}, name) || own(LABELS, name);
		};
		var text = String(error.message).replace(UPLOAD_HINT, '');
		var first = /^\w+/.exec(text);
		var given = error.field ? String(error.field).split('.')[0] : undefined;
		var field = labelOf(given) ? given : first && labelOf(first[0]) ? first[0] : undefined;
		var prefix = field && (!first || first[0] !== field) ? labelOf(field) + ': ' : '';
		if (field && first && first[0] === field) text = text.replace(/^\w+(?:\.\d+)+/, field);
		return (
			prefix +
			text.replace(/\b\w+\b/g, function (word, at) {
				var named =
					(at === 0 && word === field) ||
					NAME_LIKE.test(word) ||
					(text[at - 1] === '(' && text[at + word.length] === ')');
				return (named && labelOf(word)) || word;
			})
		);
	}

	function el(tag, attrs, children) {
		var node = document.createElement(tag);
		Object.keys(attrs || {}).forEach(function (key) {
			if (key === 'text') node.textContent = attrs[key];
			else if (attrs[key] !== undefined && attrs[key] !== false)
				node.setAttribute(key, attrs[key] === true ? '' : attrs[key]);
		});
		(children || []).forEach(function (child) {
			node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
		});
		return node;
	}

	/**
	 * A table of `rows` under `headers`. Each cell carries its column's header as data-label: on a
	 * phone's width the rows become cards, each cell a line named by it (app.css).
	 */
	function table(headers, rows, attrs) {
		rows.forEach(function (row) {
			Array.prototype.forEach.call(row.children, function (cell, i) {
				if (headers[i] && !cell.hasAttribute('data-label')) cell.setAttribute('data-label', headers[i]);
			});
		});
		return el('table', Object.assign({ class: 'list' }, attrs || {}), [
			el('thead', {}, [
				el(
					'tr',
					{},
					headers.map(function (h) {
						return el('th', { text: h });
					}),
				),
			]),
			el('tbody', {}, rows),
		]);
	}

	function total(counts) {
		return OUTCOMES.reduce(function (sum, key) {
			return sum + (counts[key] || 0);
		}, 0);
	}
	/** Recipients with a final outcome (nothing more will happen to them). */
	function done(counts) {
		return total(counts) - counts.pending - counts.claimed;
	}
	/**
	 * Proven not to have the message (failed for good, or not sent
	 * when the campaign stopped): what retry-not-sent is about.
	 */
	function notSent(counts) {
		return counts.failed + counts.not_sent;
	}
	var pluralRules = new Intl.PluralRules('en');
	/** `n` with the word its number takes: "1 recipient", "2 recipients" (`many` when the plural is not word + s). */
	var pages = [];
	/**
	 * Registers a page of the console (app.js routes to it): `pattern` matches location.hash (no
	 * pattern: the page shown for any hash no other claims); `open(element, match)` fills the element
	 * and returns a view with `refresh()` (a promise; called at once, then every `refreshMs`, 2 s
	 * unless given, 0 for never) and optionally `destroy()`, or nothing for a page that does not refresh.
	 */
	function page(definition) {
		if (definition.pattern) pages.push(definition);
		else pages.fallback = definition;
	}

	function plural(n, one, many) {
		return n + ' ' + (pluralRules.select(n) === 'one' ? one : many || one + 's');
	}
	/** "45 s", "12 min 5 s", "3 h 20 min", "6 d 23 h": each part whole, the larger ones never rounded up. */
	function spoken(seconds) {
		if (seconds < 60) return seconds + ' s';
		if (seconds < 3600) return Math.floor(seconds / 60) + ' min' + (seconds % 60 ? ' ' + (seconds % 60) + ' s' : '');
		if (seconds < 2 * 86400) {
			var minutes = Math.floor((seconds % 3600) / 60);
			return Math.floor(seconds / 3600) + ' h' + (minutes ? ' ' + minutes + ' min' : '');
		}
		var hours = Math.floor((seconds % 86400) / 3600);
		return Math.floor(seconds / 86400) + ' d' + (hours ? ' ' + hours + ' h' : '');
	}
	function eta(seconds) {
		if (seconds === null) return '?';
		return seconds < 90 ? seconds + ' s' : Math.round(seconds / 60) + ' min';
	}

	/** The parts of the bar, in order; what is left of it is still to send. */
	var PARTS = [
		{
			key: 'sent',
			label: 'sent',
			of: function (c) {
				return c.sent;
			},
		},
		{
			key: 'unknown',
			label: 'unknown',
			of: function (c) {
				return c.unknown;
			},
		},
		{ key: 'not-sent', label: 'not sent', of: notSent },
		{
			key: 'capped',
			label: 'capped',
			of: function (c) {
				return c.capped || 0;
			},
		},
		{
			key: 'cancelled',
			label: 'cancelled',
			of: function (c) {
				return c.cancelled;
			},
		},
		{
			key: 'expired',
			label: 'expired',
			of: function (c) {
				return c.expired || 0;
			},
		},
		{
			key: 'rejected',
			label: 'rejected',
			of: function (c) {
				return c.rejected;
			},
		},
		{
			key: 'suppressed',
			label: 'suppressed',
			of: function (c) {
				return c.suppressed || 0;
			},
		},
	];

	/** A bar of what became of the recipients, so a cancelled campaign does not look like a completed one. */
	function bar(counts, id) {
		var all = total(counts);
		var finished = done(counts);
		var segments = PARTS.map(function (part) {
			var n = part.of(counts);
			return el('span', { class: 'part ' + part.key, 'data-part': part.key, title: n + ' ' + part.label }, []);
		});
		var node = el(
			'div',
			{
				class: 'bar',
				role: 'progressbar',
				'aria-valuemin': '0',
				'aria-valuemax': String(all),
				'aria-valuenow': String(finished),
				'data-testid': 'progress-' + id,
				title:
					PARTS.map(function (part) {
						return part.of(counts) + ' ' + part.label;
					}).join(' · ') +
					' · ' +
					(all - finished) +
					' to go',
			},
			segments,
		);
		// Widths as CSS properties (the page's CSP allows no inline style attribute, but the CSSOM is script).
		PARTS.forEach(function (part, i) {
			segments[i].style.width = (all ? (100 * part.of(counts)) / all : 0) + '%';
		});
		return node;
	}

	function legend(counts) {
		return el(
			'p',
			{ class: 'legend', 'data-testid': 'bar-legend' },
			PARTS.map(function (part) {
				return el('span', { class: 'key ' + part.key }, [el('i'), part.label + ' ' + part.of(counts)]);
			}).concat([el('span', { class: 'key to-go' }, [el('i'), 'to go ' + (counts.pending + counts.claimed)])]),
		);
	}

	/** A share (0..1) as the console writes it: one decimal, in percent. */
	function pct(rate) {
		return (100 * rate).toFixed(1) + '%';
	}

	/** What each tracking mode means for the numbers below it, in the operator's words. */
	var TRACKING = {
		messaging_api: 'Tracked through the messaging API (each message\u2019s status).',
		conversations_only:
			'Tracked through conversations only: delivered cannot be told apart from sent there ' +
			'(only read, failed and replies are seen), so delivered counts the read ones. ' +
			'Set CONVO_BASE_URL and CONVO_ACCESS_TOKEN to tell them apart.',
		off:
			'Tracking is off: nothing past sent is known. To turn it on, ' +
			'give the runner processes CONVO_BASE_URL and CONVO_ACCESS_TOKEN (the messaging API), ' +
			'or CONVO_EXTERNAL_URL and CONVO_API_KEY for conversations only, and restart them.',
	};

	/**
	 * A campaign's delivery funnel read at a glance: one row per stage with its count, its share and
	 * a bar as wide as its share of the audience; then failed to deliver by reason, in flight, and
	 * the tracking mode. Delivered, read and replied are shares of sent (the API's rates); accepted
	 * and sent are shares of the stage before them.
	 */
	function funnel(f) {
		if (!f)
			return el('p', { class: 'note', 'data-testid': 'funnel-none', text: 'No delivery funnel for this campaign.' });
		var stages = [
			{ key: 'audience', label: 'Audience', rate: null },
			{ key: 'accepted', label: 'Accepted', rate: f.audience ? f.accepted / f.audience : 0, of: 'of audience' },
			{ key: 'sent', label: 'Sent', rate: f.accepted ? f.sent / f.accepted : 0, of: 'of accepted' },
			{ key: 'delivered', label: 'Delivered', rate: f.rates.delivered, of: 'of sent' },
			{ key: 'read', label: 'Read', rate: f.rates.read, of: 'of sent' },
			{ key: 'replied', label: 'Replied', rate: f.rates.replied, of: 'of sent' },
		];
		var fills = [];
		var rows = stages.map(function (stage) {
			var fill = el('span', { class: 'fill ' + stage.key });
			fills.push([fill, f.audience ? f[stage.key] / f.audience : 0]);
			return el('div', { class: 'stage', 'data-testid': 'funnel-' + stage.key }, [
				el('span', { class: 'label', text: stage.label }),
				el('span', { class: 'track' }, [fill]),
				el('span', { class: 'count', 'data-testid': 'funnel-' + stage.key + '-count', text: String(f[stage.key]) }),
				el('span', {
					class: 'rate',
					'data-testid': 'funnel-' + stage.key + '-rate',
					text: stage.rate === null ? '' : pct(stage.rate) + ' ' + stage.of,
				}),
			]);
		});
		// Widths through the CSSOM: the CSP allows no inline style attribute.
		fills.forEach(function (pair) {
			pair[0].style.width = 100 * pair[1] + '%';
		});
		var reasons = f.failed_reasons.map(function (r) {
			return el('li', { 'data-testid': 'funnel-reason' }, [
				el('span', { class: 'count', 'data-testid': 'funnel-reason-count', text: String(r.count) }),
				' ',
				el('span', { 'data-testid': 'funnel-reason-text', text: r.reason }),
			]);
		});
		return el('div', { class: 'funnel', 'data-testid': 'funnel' }, [
			el('div', { class: 'stages' }, rows),
			el('div', { class: 'aside' }, [
				el('p', { class: 'failed' }, [
					'Failed to deliver ',
					el('strong', { 'data-testid': 'funnel-failed-count', text: String(f.failed_delivery) }),
					' ',
					el('span', { 'data-testid': 'funnel-failed-rate', text: '(' + pct(f.rates.failed_delivery) + ' of sent)' }),
				]),
				reasons.length
					? el('ul', { class: 'reasons', 'data-testid': 'funnel-reasons' }, reasons)
					: el('p', { class: 'note', text: 'No failure.' }),
				el('p', {}, [
					'In flight ',
					el('strong', { 'data-testid': 'funnel-in-flight', text: String(f.in_flight) }),
					' (sent, neither delivered nor failed yet: still moving)',
				]),
				el('p', {
					class: 'settled',
					'data-testid': 'funnel-settled',
					text: f.settled
						? 'Settled: every sent message is final or out of checks.'
						: 'Tracking: the numbers still move.',
				}),
				el('p', {
					class: 'tracking ' + f.tracking,
					'data-testid': 'funnel-tracking',
					'data-mode': f.tracking,
					text: TRACKING[f.tracking] || f.tracking,
				}),
			]),
		]);
	}

	/**
	 * A form's field: its label (tied by id, so an assistive tool names the control by it), the control,
	 * and a hint below it that the control points to (aria-describedby).
	 */
	function field(label, control, hint) {
		control.id = control.id || 'field-' + (control.getAttribute('data-testid') || control.name);
		var children = [el('label', { for: control.id, text: label }), control];
		if (hint) {
			control.setAttribute('aria-describedby', control.id + '-hint');
			children.push(el('small', { id: control.id + '-hint', class: 'hint', text: hint }));
		}
		return el('div', { class: 'field' }, children);
	}

	/** A time the API gives (ISO 8601) in the browser's zone; '—' for none. */
	function when(iso) {
		return iso ? el('time', { datetime: iso, text: new Date(iso).toLocaleString() }) : '—';
	}

	function badge(state) {
		return el('span', { class: 'state ' + state, 'data-testid': 'state', text: state });
	}

	/** The one confirmation dialog, outside #app so a refresh of the page does not close it. */
	var dialog = el('dialog', { 'data-testid': 'confirm-dialog', class: 'confirm' }, [
		el('h2', { 'data-testid': 'confirm-title' }),
		el('p', { 'data-testid': 'confirm-text' }),
		el('form', { method: 'dialog', class: 'actions' }, [
			el('button', { value: 'cancel', 'data-testid': 'confirm-dismiss' }, ['Keep it']),
			el('button', { value: 'ok', class: 'danger', 'data-testid': 'confirm-ok' }, ['Confirm']),
		]),
	]);
	document.body.appendChild(dialog);

	/** The open dialog's text and button label, as functions: reword() reads them again. */
	var wording = null;

	/** Writes the open dialog's text and button label afresh (a count behind it moved on); nothing when closed. */
	function reword() {
		if (!wording || !dialog.open) return;
		dialog.querySelector('[data-testid="confirm-text"]').textContent = wording.text();
		dialog.querySelector('[data-testid="confirm-ok"]').textContent = wording.okLabel();
	}

	/**
	 * Asks in the page; resolves true only when the operator confirms. `text` and `okLabel`: strings,
	 * or functions read again at each reword() while the dialog is open (a count that still moves).
	 */
	function confirm(title, text, okLabel) {
		var constant = function (value) {
			return typeof value === 'function'
				? value
				: function () {
						return value;
					};
		};
		wording = { text: constant(text), okLabel: constant(okLabel) };
		dialog.querySelector('[data-testid="confirm-title"]').textContent = title;
		dialog.returnValue = '';
		dialog.showModal();
		reword();
		return new Promise(function (resolve) {
			dialog.addEventListener(
				'close',
				function () {
					wording = null;
					resolve(dialog.returnValue === 'ok');
				},
				{ once: true },
			);
		});
	}

	window.ConvoConsole = {
		OUTCOMES: OUTCOMES,
		LABELS: LABELS,
		errorText: errorText,
		api: api,
		el: el,
		table: table,
		total: total,
		done: done,
		notSent: notSent,
		eta: eta,
		plural: plural,
		spoken: spoken,
		bar: bar,
		legend: legend,
		badge: badge,
		field: field,
		when: when,
		pct: pct,
		funnel: funnel,
		confirm: confirm,
		reword: reword,
		views: {},
		pages: pages,
		page: page,
		created: {},
	};
})();
