// Reindex runs: the runs with their state and counts, a form that starts one (or checks it first as a
// dry run, or makes it a cron schedule) with the deactivation guard explained where it is set, the
// schedules (removed after a confirmation), and a run's own page, followed until it ends, with its report.
(function () {
	'use strict';
	var C = window.ConvoConsole;
	var el = C.el;
	var SETTLED = ['completed', 'failed', 'skipped'];
	/** The API's fields as the form labels them: its errors and the runs' notes name them so. */
	var LABELS = {
		collection_id: 'Collection id',
		source: 'Source',
		format: 'Format',
		id_field: 'Id field',
		embedding_json: 'Embedding JSON',
		deactivate_missing: 'Deactivate missing items',
		max_deactivate: 'Deactivate at most',
		force_deactivate: 'Override the guard',
		force: 'Upsert every item',
		dry_run: 'Dry run',
		rate: 'Rate (upserts per second)',
		cron: 'Repeat (cron)',
		tz: 'Time zone of the cron',
	};

	/** A note of the runner's (a guard's verdict, a run's error) with the API's names as the form labels them. */
	function labelled(text) {
		return text ? C.errorText({ message: text }, LABELS) : text;
	}

	function countsText(c) {
		return [
			c.read + ' read',
			c.unchanged + ' unchanged',
			c.created + ' created',
			c.updated + ' updated',
			c.deactivated + ' deactivated',
			c.rejected + ' rejected',
		]
			.concat(c.failed === undefined ? [] : [c.failed + ' failed'])
			.join(' · ');
	}

	function progress(run) {
		var size = run.source_bytes.total;
		var done = SETTLED.indexOf(run.state) >= 0;
		return el('progress', {
			max: String(size || 1),
			value: String(size ? run.source_bytes.read : done ? 1 : 0),
			'aria-label': 'source read',
		});
	}

	function runTable(runs) {
		var rows = runs.map(function (run) {
			return el('tr', { 'data-testid': 'reindex-run-row', 'data-id': run.id }, [
				el('td', {}, [el('a', { href: '#/reindex/' + run.id, 'data-testid': 'reindex-run-link', text: run.id })]),
				el('td', { class: 'cut' }, [el('span', { class: 'clip id', title: run.collection, text: run.collection })]),
				el('td', { 'data-testid': 'reindex-run-state' }, [C.badge(run.state)]),
				el('td', {}, [progress(run)]),
				el('td', { 'data-testid': 'reindex-run-counts', text: countsText(run.counts) }),
				el('td', { class: 'cut' }, [
					run.last_error ? el('span', { class: 'clip', title: run.last_error, text: labelled(run.last_error) }) : '—',
				]),
			]);
		});
		if (!rows.length) return el('p', { 'data-testid': 'reindex-none', text: 'No reindex run yet.' });
		return C.table(['Run', 'Collection', 'State', 'Source read', 'Items', 'Last error'], rows, {
			class: 'list cards reindex-runs',
		});
	}

	function scheduleTable(schedules, remove) {
		var rows = schedules.map(function (s) {
			var button = el('button', { type: 'button', class: 'danger', 'data-testid': 'schedule-remove' }, ['Remove…']);
			button.addEventListener('click', function () {
				remove(s, button);
			});
			return el('tr', { 'data-testid': 'schedule-row', 'data-id': s.id }, [
				el('td', { text: s.id }),
				el('td', {}, [el('code', { text: s.cron }), ' ', el('small', { text: s.tz })]),
				el('td', { class: 'cut' }, [el('span', { class: 'clip', title: s.source, text: s.source })]),
				el('td', { class: 'cut' }, [el('span', { class: 'clip id', title: s.collection, text: s.collection })]),
				el('td', {}, [C.when(s.created_at)]),
				el('td', { class: 'row-actions' }, [button]),
			]);
		});
		if (!rows.length) return el('p', { 'data-testid': 'schedule-none', text: 'No reindex schedule.' });
		return C.table(['Schedule', 'Repeat', 'Source', 'Collection', 'Created', 'Actions'], rows, {
			class: 'list cards reindex-schedules',
		});
	}

	/** What a dry run answered: the counts, the guard's verdict in the form's words, the first rejected rows. */
	function dryRunResult(dry) {
		var guard = dry.wipe_protection;
		var rejected = dry.rejected_rows.map(function (row) {
			return el('li', { text: 'line ' + row.line + ': ' + row.reason });
		});
		return el('div', { class: 'created', 'data-testid': 'reindex-dry-run', role: 'status' }, [
			el('p', {}, [el('strong', { text: 'Dry run: nothing was written. ' }), 'A run now would find ']),
			el('p', { 'data-testid': 'reindex-dry-counts', text: countsText(dry.counts) }),
			guard
				? el('p', { class: guard.verdict === 'would stop' ? 'error' : '', 'data-testid': 'reindex-dry-guard' }, [
						el('strong', { text: 'Guard: ' + guard.verdict + '. ' }),
						labelled(guard.reason),
					])
				: el('p', { 'data-testid': 'reindex-dry-guard', text: 'Deactivation: ' + labelled(dry.deactivation) }),
			rejected.length ? el('ul', { class: 'rejections' }, rejected) : el('span'),
		]);
	}

	function startForm(done) {
		var input = function (name, attrs) {
			return el('input', Object.assign({ type: 'text', name: name, 'data-testid': 'reindex-' + name }, attrs || {}));
		};
		var f = {
			collection: input('collection_id', {
				required: true,
				spellcheck: 'false',
				placeholder: 'UUID of the collection',
			}),
			source: input('source', { required: true, spellcheck: 'false', placeholder: 'https://… or a file' }),
			format: el('select', { name: 'format', 'data-testid': 'reindex-format' }, [
				el('option', { value: '', text: 'From the source\u2019s name' }),
				el('option', { value: 'json', text: 'JSON (an array)' }),
				el('option', { value: 'ndjson', text: 'NDJSON (one object a line)' }),
				el('option', { value: 'csv', text: 'CSV' }),
			]),
			idField: input('id_field', { required: true, spellcheck: 'false', placeholder: 'sku' }),
			embedding: el('textarea', {
				name: 'embedding_json',
				rows: '2',
				spellcheck: 'false',
				'data-testid': 'reindex-embedding_json',
				placeholder: '{ "text": "title" }',
			}),
			rate: input('rate', { type: 'number', min: '1', max: '1000', step: '1', placeholder: '100' }),
			force: input('force', { type: 'checkbox' }),
			deactivate: input('deactivate_missing', { type: 'checkbox' }),
			max: input('max_deactivate', { value: '10%', spellcheck: 'false' }),
			override: input('force_deactivate', { type: 'checkbox' }),
			cron: input('cron', { spellcheck: 'false', placeholder: '0 3 * * *' }),
			tz: input('tz', { spellcheck: 'false', placeholder: 'Europe/Berlin' }),
		};
		var check = function (label, control, hint) {
			control.id = 'field-' + control.getAttribute('data-testid');
			var children = [control, el('label', { for: control.id, text: label })];
			if (hint) {
				control.setAttribute('aria-describedby', control.id + '-hint');
				children.push(el('small', { id: control.id + '-hint', class: 'hint', text: hint }));
			}
			return el('div', { class: 'field check' }, children);
		};
		var problem = el('p', { class: 'error', role: 'alert', 'data-testid': 'reindex-error' });
		var result = el('div', { 'aria-live': 'polite' });
		var dryButton = el('button', { type: 'submit', value: 'dry', 'data-testid': 'reindex-dry-run-button' }, [
			'Dry run (write nothing)',
		]);
		var startButton = el('button', { type: 'submit', value: 'start', 'data-testid': 'reindex-start' }, ['Start run']);
		var guard = el('fieldset', { class: 'guard', 'data-testid': 'reindex-guard' }, [
			el('legend', { text: 'The deactivation guard' }),
			el('p', {
				class: 'hint',
				id: 'reindex-guard-explained',
				text:
					'A feed that suddenly lacks most of its items (an empty export, the wrong file) must not deactivate ' +
					'most of the collection: before deactivating anything a run counts what it would deactivate, and ' +
					'above this limit it deactivates nothing and fails.',
			}),
			C.field(
				'Deactivate at most',
				f.max,
				'A share of the collection\u2019s active items (10%) or a number of items (50).',
			),
			check(
				'Override the guard',
				f.override,
				'Deactivate however many that is: only when the feed is known to be right (a dry run showed the count ' +
					'you expect).',
			),
		]);
		var form = el('form', { class: 'panel ops', 'data-testid': 'reindex-form', novalidate: true }, [
			el('h2', { text: 'Start a reindex run' }),
			el('div', { class: 'grid' }, [
				C.field('Collection id', f.collection),
				C.field('Source', f.source, 'An http(s) URL, or a file inside the runner\u2019s RUNNER_SOURCE_DIR.'),
				C.field('Format', f.format),
				C.field('Id field', f.idField, 'The field holding each item\u2019s id (external_id).'),
				C.field('Rate (upserts per second)', f.rate, 'Default 100.'),
				C.field('Embedding JSON', f.embedding, 'Optional: a JSON object sent as embedding_json with every item.'),
			]),
			check('Upsert every item', f.force, 'Send every item, changed or not.'),
			check(
				'Deactivate missing items',
				f.deactivate,
				'After a complete read, deactivate the items the feed no longer holds (within the guard below).',
			),
			guard,
			el('div', { class: 'grid' }, [
				C.field('Repeat (cron)', f.cron, 'Optional: a schedule whose every firing is a run of its own.'),
				C.field('Time zone of the cron', f.tz, 'Default UTC.'),
			]),
			el('div', { class: 'actions' }, [dryButton, startButton]),
			problem,
			result,
		]);

		function followDeactivate() {
			guard.disabled = !f.deactivate.checked;
		}
		f.deactivate.addEventListener('change', followDeactivate);
		followDeactivate();
		f.cron.addEventListener('input', function () {
			startButton.textContent = f.cron.value.trim() ? 'Create schedule' : 'Start run';
		});

		/** The form as the API's JSON; undefined (the reason said) when one of the form's own rules fails. */
		function body() {
			var b = {
				collection_id: f.collection.value.trim(),
				source: f.source.value.trim(),
				id_field: f.idField.value.trim(),
			};
			if (!b.collection_id) return fail('Collection id is required');
			if (!b.source) return fail('Source is required');
			if (!b.id_field) return fail('Id field is required');
			if (f.format.value) b.format = f.format.value;
			if (f.embedding.value.trim()) {
				try {
					b.embedding_json = JSON.parse(f.embedding.value);
				} catch (error) {
					return fail('Embedding JSON is not JSON: ' + error.message);
				}
				if (!b.embedding_json || typeof b.embedding_json !== 'object' || Array.isArray(b.embedding_json))
					return fail('Embedding JSON must be one JSON object');
			}
			if (f.rate.value.trim()) b.rate = Number(f.rate.value);
			if (f.force.checked) b.force = true;
			if (f.deactivate.checked) {
				b.deactivate_missing = true;
				b.max_deactivate = f.max.value.trim();
				if (f.override.checked) b.force_deactivate = true;
			}
			if (f.cron.value.trim()) b.cron = f.cron.value.trim();
			if (f.tz.value.trim()) b.tz = f.tz.value.trim();
			return b;
		}
		function fail(text) {
			problem.textContent = text;
			return undefined;
		}

		form.addEventListener('submit', function (event) {
			event.preventDefault();
			var dry = event.submitter === dryButton;
			problem.textContent = '';
			result.replaceChildren();
			var b = body();
			if (!b) return;
			if (dry) b.dry_run = true;
			dryButton.disabled = startButton.disabled = true;
			C.api('POST', '/api/reindex', b)
				.then(function (answer) {
					if (answer.kind === 'dry_run') result.replaceChildren(dryRunResult(answer));
					else done(answer);
				})
				.catch(function (error) {
					if (error.message !== 'signed out') problem.textContent = C.errorText(error, LABELS);
				})
				.then(function () {
					dryButton.disabled = startButton.disabled = false;
				});
		});
		return form;
	}

	function openList(page) {
		var seen = 0;
		var runs = el('div', { 'data-testid': 'reindex-runs' });
		var schedules = el('div', { 'data-testid': 'reindex-schedules' });
		var note = el('p', { class: 'note', role: 'status', 'data-testid': 'reindex-message' });
		function say(text, isError) {
			note.className = isError ? 'note error' : 'note';
			note.textContent = text;
		}

		function remove(schedule, button) {
			C.confirm(
				'Remove this reindex schedule?',
				'No more runs start from ' +
					schedule.id +
					' (' +
					schedule.cron +
					', ' +
					schedule.tz +
					'); the runs it made stay, with their reports.',
				'Remove schedule',
			).then(function (ok) {
				if (!ok) return;
				button.disabled = true;
				C.api('DELETE', '/api/reindex/schedules/' + encodeURIComponent(schedule.id))
					.then(function () {
						say('Schedule ' + schedule.id + ' removed.');
						return refresh();
					})
					.catch(function (error) {
						if (error.message !== 'signed out') say(C.errorText(error, LABELS), true);
						button.disabled = false;
					});
			});
		}

		function refresh() {
			var asked = ++seen;
			return C.api('GET', '/api/reindex').then(function (answer) {
				if (asked !== seen) return;
				runs.replaceChildren(runTable(answer.runs));
				schedules.replaceChildren(scheduleTable(answer.schedules, remove));
			});
		}

		var form = startForm(function (answer) {
			if (answer.kind === 'run') {
				location.hash = '#/reindex/' + answer.id;
				return;
			}
			say('Schedule ' + answer.schedule.id + ' created: each firing is a run of its own, listed above.');
			refresh().catch(function () {});
		});

		// The form is below the runs, which may be many: this takes the operator (and the focus) to it.
		var toForm = el('button', { type: 'button', class: 'button', 'data-testid': 'reindex-new' }, ['Start a run']);
		toForm.addEventListener('click', function () {
			form.scrollIntoView({ block: 'start' });
			form.querySelector('input').focus();
		});
		page.replaceChildren(
			el('h1', {}, ['Reindex runs', toForm]),
			el('p', {
				class: 'intro',
				text:
					'Runs keep a search collection in sync with a feed, sending only what changed. The newest ' +
					'runs are listed; a run\u2019s page follows it and shows its report.',
			}),
			note,
			runs,
			form,
			el('h2', { text: 'Schedules' }),
			schedules,
		);
		return { refresh: refresh };
	}

	function list(items, empty, render) {
		if (!items.length) return el('p', { class: 'meta', text: empty });
		return el('ul', { class: 'notes' }, items.map(render));
	}

	function openRun(page, id) {
		var path = '/api/reindex/' + encodeURIComponent(id);
		var latest = null;
		var title = el('span', { text: 'Reindex run ' + id });
		var badgeBox = el('span', { 'data-testid': 'reindex-state' });
		var meta = el('p', { class: 'meta', 'data-testid': 'reindex-meta' });
		var bar = el('div');
		var counts = el('div');
		var deactivation = el('p', { 'data-testid': 'reindex-deactivation' });
		var lastError = el('div');
		var report = el('div', { 'data-testid': 'reindex-report' });

		function refresh() {
			// A run that ended changes no more: its report is read once, not every 2 s.
			if (latest && SETTLED.indexOf(latest.state) >= 0) return Promise.resolve();
			return C.api('GET', path + '/report').then(show);
		}

		function show(r) {
			latest = r;
			badgeBox.replaceChildren(C.badge(r.state));
			meta.replaceChildren(
				'collection ',
				el('code', { text: r.collection }),
				' · source ',
				el('code', { class: 'wrap', text: r.source }),
				' · ' + r.format + ' · id field ' + r.id_field + ' · ' + r.rate_limit + ' upserts/s',
				' · created ',
				C.when(r.created_at),
				r.finished_at ? ' · ended ' : '',
				r.finished_at ? C.when(r.finished_at) : '',
			);
			var settled = SETTLED.indexOf(r.state) >= 0;
			bar.replaceChildren(
				progress(r),
				el('p', {
					class: 'meta',
					text: settled
						? 'Ended ' + r.state + '.'
						: 'Now ' + r.rate.toFixed(1) + ' rows/s · ETA ' + C.eta(r.eta_seconds),
				}),
			);
			counts.replaceChildren(
				el(
					'dl',
					{ class: 'figures' },
					['read', 'unchanged', 'created', 'updated', 'deactivated', 'rejected', 'failed'].map(function (key) {
						return el('div', {}, [
							el('dt', { text: key }),
							el('dd', { 'data-testid': 'reindex-count-' + key, text: String(r.counts[key]) }),
						]);
					}),
				),
			);
			deactivation.replaceChildren(
				el('strong', { text: 'Deactivation: ' }),
				labelled(r.deactivation) || 'not yet known',
			);
			lastError.replaceChildren(
				r.last_error
					? el('p', { class: 'error', 'data-testid': 'reindex-last-error', text: labelled(r.last_error) })
					: '',
			);
			report.replaceChildren(
				el('h2', { text: 'Rejected rows' }),
				list(r.rejected_rows, 'None.', function (row) {
					return el('li', { text: 'line ' + row.line + ': ' + row.reason });
				}),
				el('h2', { text: 'Failed upserts' }),
				list(r.failures, 'None.', function (row) {
					return el('li', { text: row.external_id + (row.line ? ' (line ' + row.line + ')' : '') + ': ' + row.error });
				}),
				el('h2', { text: 'Answers other than expected' }),
				list(r.mismatches, 'None.', function (row) {
					return el('li', { text: row.external_id + ': expected ' + row.expected + ', the service said ' + row.got });
				}),
				el('h2', { text: 'At the service, never sent by the runner (left alone)' }),
				list(r.foreign_items, 'None.', function (external) {
					return el('li', { text: external });
				}),
				r.notes_truncated ? el('p', { class: 'meta', text: 'Only the first notes of each kind are kept.' }) : '',
			);
		}

		page.replaceChildren(
			el('p', {}, [el('a', { href: '#/reindex', text: '← Reindex runs' })]),
			el('h1', { 'data-testid': 'reindex-title' }, [title, badgeBox]),
			meta,
			lastError,
			bar,
			counts,
			deactivation,
			report,
		);
		return { refresh: refresh };
	}

	C.page({ pattern: /^#\/reindex$/, open: openList });
	C.page({
		pattern: /^#\/reindex\/([A-Za-z0-9_-]+)$/,
		open: function (element, match) {
			return openRun(element, match[1]);
		},
	});
})();
