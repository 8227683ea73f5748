// The suppression list: look a phone up, add one with a reason, remove one (asked in the page),
// import a CSV (its rows counted, each rejected row with its line), export the whole list as CSV,
// and page through it, newest first. All through /api/suppressions, so through the CLI's core.
(function () {
	'use strict';
	var C = window.ConvoConsole;
	var el = C.el;
	var PAGE_SIZE = 50;
	/** The API's names of the fields as this page labels them: the look-up's phone is the route's id. */
	var LABELS = { id: 'Phone to look up', phone: 'Phone to add', reason: 'Reason' };
	var SOURCES = { keyword: 'opt-out keyword', operator: 'operator', workflow: 'workflow', import: 'import' };

	/** A field under its label; a hint below it, read with the field but not part of its name. */
	function field(label, input, hint) {
		if (!hint) return el('div', { class: 'field' }, [el('label', {}, [label, input])]);
		var id = input.getAttribute('data-testid') + '-hint';
		input.setAttribute('aria-describedby', id);
		return el('div', { class: 'field' }, [el('label', {}, [label, input]), el('small', { id: id, text: hint })]);
	}

	function when(at) {
		return el('time', { datetime: at, text: new Date(at).toLocaleString() });
	}

	/** A line under a form saying what its action did, or its error naming the field. */
	function status(testid) {
		return el('p', { class: 'note', 'data-testid': testid, 'aria-live': 'polite', tabindex: '-1' });
	}
	function say(node, children, isError) {
		node.className = isError ? 'note error' : 'note';
		node.replaceChildren.apply(node, children);
	}
	function failed(node) {
		return function (error) {
			if (error.message !== 'signed out') say(node, [C.errorText(error, LABELS)], true);
		};
	}

	function open(page) {
		var offset = 0;
		var shown = '';
		var lookedUp = null;
		var lookup = {
			phone: el('input', {
				type: 'search',
				name: 'id',
				required: true,
				maxlength: '40',
				inputmode: 'tel',
				autocomplete: 'off',
				'data-testid': 'suppression-lookup-phone',
			}),
			result: el('div', { class: 'lookup', 'data-testid': 'suppression-lookup-result', 'aria-live': 'polite' }),
		};
		var add = {
			phone: el('input', {
				name: 'phone',
				required: true,
				maxlength: '40',
				inputmode: 'tel',
				autocomplete: 'off',
				'data-testid': 'suppression-add-phone',
			}),
			reason: el('input', { name: 'reason', maxlength: '200', 'data-testid': 'suppression-add-reason' }),
			note: status('suppression-add-result'),
		};
		var upload = {
			file: el('input', {
				name: 'file',
				type: 'file',
				required: true,
				accept: '.csv,text/csv',
				'data-testid': 'suppression-import-file',
			}),
			result: el('div', { 'data-testid': 'suppression-import-result', 'aria-live': 'polite' }),
		};
		var listNote = status('suppression-list-note');
		var results = el('div', { 'data-testid': 'suppression-results' });
		var count = el('span', { class: 'count', 'data-testid': 'suppression-count', 'aria-live': 'polite' });
		var previous = el('button', { type: 'button', 'data-testid': 'suppression-previous', text: 'Previous' });
		var next = el('button', { type: 'button', 'data-testid': 'suppression-next', text: 'Next' });

		function refresh() {
			var asked = offset;
			return C.api('GET', '/api/suppressions?limit=' + PAGE_SIZE + '&offset=' + offset).then(function (answer) {
				if (asked !== offset) return;
				// A page left empty by removals: the one before it.
				if (!answer.items.length && offset > 0) {
					offset = Math.max(0, offset - PAGE_SIZE);
					return refresh();
				}
				// Redrawn only when it changed, so a Remove button keeps the keyboard's focus between refreshes.
				var text = JSON.stringify(answer);
				if (text !== shown) showPage(answer);
				shown = text;
			});
		}
		function changed() {
			shown = '';
			refresh().catch(failed(listNote));
			if (lookedUp) lookUp(lookedUp);
		}

		function showPage(answer) {
			count.textContent = answer.items.length
				? answer.offset + 1 + '–' + (answer.offset + answer.items.length) + ' of ' + answer.total
				: '0 of ' + answer.total;
			previous.disabled = answer.offset === 0;
			next.disabled = answer.offset + answer.items.length >= answer.total;
			if (!answer.items.length) {
				results.replaceChildren(el('p', { 'data-testid': 'suppression-empty', text: 'No phone is on the list.' }));
				return;
			}
			var rows = answer.items.map(function (entry) {
				return el('tr', { 'data-testid': 'suppression-row' }, [
					el('td', { 'data-testid': 'suppression-phone', text: entry.phone }),
					el('td', {}, [when(entry.at)]),
					el('td', { text: SOURCES[entry.source] || entry.source }),
					el('td', { class: 'reason', text: entry.reason }),
					el('td', {}, [removeButton(entry.phone, listNote)]),
				]);
			});
			results.replaceChildren(
				C.table(['Phone', 'Since', 'Source', 'Reason', 'Action'], rows, { class: 'list suppressions' }),
			);
		}

		function removeButton(phone, note) {
			var button = el('button', {
				type: 'button',
				class: 'danger',
				'aria-label': 'Remove ' + phone,
				'data-testid': 'suppression-remove',
				text: 'Remove…',
			});
			button.addEventListener('click', function () {
				C.confirm(
					'Take ' + phone + ' off the suppression list?',
					'Marketing campaigns send to ' + phone + ' again, from their next send.',
					'Remove',
				).then(function (ok) {
					if (!ok) return;
					C.api('DELETE', '/api/suppressions/' + encodeURIComponent(phone))
						.then(function (answer) {
							say(note, [answer.phone + (answer.removed ? ' removed from the list.' : ' was not on the list.')]);
							note.focus();
							changed();
						})
						.catch(failed(note));
				});
			});
			return button;
		}

		/** The look-up's answer, redrawn after every change (a removal's answer included), keeping the focus in it. */
		function lookUp(phone) {
			var line = status('suppression-lookup-answer');
			var show = function (children, isError) {
				var focused = lookup.result.contains(document.activeElement);
				say(line, children, isError);
				lookup.result.replaceChildren(line);
				if (focused) line.focus();
			};
			return C.api('GET', '/api/suppressions/' + encodeURIComponent(phone))
				.then(function (answer) {
					lookedUp = phone;
					var entry = answer.entry;
					show(
						entry
							? [
									el('strong', { text: answer.phone }),
									' is suppressed since ',
									when(entry.at),
									' (' + (SOURCES[entry.source] || entry.source) + '): ' + entry.reason + ' ',
									removeButton(answer.phone, line),
								]
							: [el('strong', { text: answer.phone }), ' is not on the suppression list: campaigns send to it.'],
					);
				})
				.catch(function (error) {
					lookedUp = null;
					if (error.message !== 'signed out') show([C.errorText(error, LABELS)], true);
				});
		}

		var lookupForm = el('form', { class: 'row-form', role: 'search', 'data-testid': 'suppression-lookup' }, [
			field(LABELS.id, lookup.phone),
			el('button', { type: 'submit', 'data-testid': 'suppression-lookup-submit', text: 'Look up' }),
		]);
		lookupForm.addEventListener('submit', function (event) {
			event.preventDefault();
			lookUp(lookup.phone.value.trim());
		});

		var addForm = el('form', { class: 'row-form', 'data-testid': 'suppression-add' }, [
			field(LABELS.phone, add.phone),
			field(LABELS.reason, add.reason, 'optional; kept with the entry, at most 200 characters'),
			el('button', { type: 'submit', 'data-testid': 'suppression-add-submit', text: 'Add' }),
		]);
		addForm.addEventListener('submit', function (event) {
			event.preventDefault();
			var body = { phone: add.phone.value.trim() };
			if (add.reason.value.trim()) body.reason = add.reason.value.trim();
			C.api('POST', '/api/suppressions', body)
				.then(function (entry) {
					say(add.note, [
						entry.added
							? entry.phone + ' added (' + entry.reason + ').'
							: entry.phone + ' was on the list already: its first entry (' + entry.reason + ') is kept.',
					]);
					addForm.reset();
					changed();
				})
				.catch(failed(add.note));
		});

		var importForm = el('form', { class: 'row-form', 'data-testid': 'suppression-import' }, [
			field('CSV file', upload.file, 'a phone column, optionally reason; each good row is added (source import)'),
			el('button', { type: 'submit', 'data-testid': 'suppression-import-submit', text: 'Import' }),
		]);
		importForm.addEventListener('submit', function (event) {
			event.preventDefault();
			upload.result.replaceChildren(el('p', { class: 'note', text: 'Importing…' }));
			C.api('POST', '/api/suppressions/import', { raw: upload.file.files[0], type: 'text/csv' })
				.then(function (answer) {
					upload.result.replaceChildren(imported(answer));
					changed();
				})
				.catch(function (error) {
					upload.result.replaceChildren(status('suppression-import-error'));
					failed(upload.result.firstChild)(error);
				});
		});

		previous.addEventListener('click', function () {
			offset = Math.max(0, offset - PAGE_SIZE);
			refresh().catch(failed(listNote));
		});
		next.addEventListener('click', function () {
			offset += PAGE_SIZE;
			refresh().catch(failed(listNote));
		});

		page.replaceChildren(
			el('h1', {}, [
				'Suppression list',
				el('a', {
					class: 'button',
					href: '/api/suppressions/export',
					download: 'suppressions.csv',
					'data-testid': 'suppression-export',
					text: 'Export CSV',
				}),
			]),
			el('p', {
				class: 'meta',
				text:
					'Phones no marketing campaign sends to: those that replied with an opt-out keyword, ' +
					'and those an operator, a workflow or an import put here.',
			}),
			el('section', { class: 'panel', 'aria-label': 'Look up a phone' }, [lookupForm, lookup.result]),
			el('section', { class: 'panel', 'aria-label': 'Add a phone' }, [addForm, add.note]),
			el('section', { class: 'panel', 'aria-label': 'Import a CSV' }, [importForm, upload.result]),
			el('h2', {}, ['On the list', el('span', { class: 'pager' }, [previous, count, next])]),
			listNote,
			results,
		);
		return { refresh: refresh };
	}

	/** An import's answer: rows read, added, already there, rejected, and the rejected rows with their lines. */
	function imported(answer) {
		var rows = answer.rejections.map(function (r) {
			return el('tr', { 'data-testid': 'suppression-rejection' }, [
				el('td', { text: String(r.line) }),
				el('td', { text: r.reason }),
			]);
		});
		var more = answer.rejected - rows.length;
		return el('div', { class: 'created' }, [
			el('p', {
				'data-testid': 'suppression-import-counts',
				text:
					C.plural(answer.rows, 'row') +
					' read: ' +
					answer.added +
					' added, ' +
					answer.already +
					' already on the list, ' +
					answer.rejected +
					' rejected.',
			}),
			rows.length ? C.table(['Line', 'Reason'], rows) : el('span'),
			more > 0 ? el('p', { class: 'note', text: 'and ' + C.plural(more, 'more rejected row') }) : el('span'),
		]);
	}

	C.page({ pattern: /^#\/suppressions$/, open: open, refreshMs: 5000 });
})();
