// New campaign: a CSV uploaded through POST /api/campaigns (the settings in the query string, as
// the API takes an upload), its accepted and rejected counts shown on the campaign's page.
(function () {
	'use strict';
	var C = window.ConvoConsole;
	var el = C.el;

	function field(label, input, hint) {
		return el('label', {}, [label, input].concat(hint ? [el('small', { text: hint })] : []));
	}

	function show(app) {
		var inputs = {
			name: el('input', { name: 'name', 'data-testid': 'create-name', placeholder: 'e.g. November newsletter' }),
			file: el('input', { name: 'file', type: 'file', accept: '.csv,text/csv', required: true, 'data-testid': 'create-file' }),
			template_id: el('input', { name: 'template_id', required: true, 'data-testid': 'create-template' }),
			from: el('input', { name: 'from', required: true, 'data-testid': 'create-from', placeholder: '4915112345678' }),
			rate: el('input', { name: 'rate', type: 'number', min: '1', step: '1', 'data-testid': 'create-rate', placeholder: 'the runner default' }),
			at: el('input', { name: 'at', type: 'datetime-local', 'data-testid': 'create-at' }),
			cron: el('input', { name: 'cron', 'data-testid': 'create-cron', placeholder: '0 9 * * 1' }),
			tz: el('input', { name: 'tz', 'data-testid': 'create-tz', placeholder: 'Europe/Berlin' }),
		};
		var message = el('div', { 'data-testid': 'create-result', 'aria-live': 'polite' });
		var submit = el('button', { type: 'submit', 'data-testid': 'create-submit' }, ['Create and start']);
		var form = el('form', { class: 'card wide', 'data-testid': 'create-form' }, [
			field('Name', inputs.name, 'optional; shown in the list'),
			field('Recipients (CSV)', inputs.file, 'a phone column, the template variables, optional buttons'),
			field('Template id', inputs.template_id),
			field('Number (from)', inputs.from),
			field('Rate (sends per second)', inputs.rate),
			field('Start at', inputs.at, 'optional; empty starts now'),
			field('Repeat (cron)', inputs.cron, 'optional; a schedule that re-reads a file or URL (use the CLI or API for those)'),
			field('Time zone of the cron', inputs.tz),
			el('div', { class: 'actions' }, [submit, el('a', { class: 'button', href: '#/' }, ['Back'])]),
			message,
		]);
		form.addEventListener('submit', function (event) {
			event.preventDefault();
			var file = inputs.file.files[0];
			var query = new URLSearchParams();
			['template_id', 'from', 'rate', 'cron', 'tz', 'name'].forEach(function (key) {
				// Only what is filled: an empty setting would be refused, and the API may not know `name` yet.
				if (inputs[key].value.trim() !== '') query.set(key, inputs[key].value.trim());
			});
			if (inputs.at.value) query.set('at', new Date(inputs.at.value).toISOString());
			submit.disabled = true;
			message.replaceChildren(el('p', { text: 'Uploading…' }));
			C.api('POST', '/api/campaigns?' + query.toString(), { raw: file, type: 'text/csv' }).then(function (answer) {
				if (answer.kind === 'schedule') {
					message.replaceChildren(el('p', { 'data-testid': 'create-schedule', text: 'Schedule ' + answer.schedule.id + ' created.' }));
					submit.disabled = false;
					return;
				}
				// The campaign's page shows what the create accepted and refused.
				C.created[answer.id] = answer;
				location.hash = '#/campaigns/' + answer.id;
			}).catch(function (error) {
				submit.disabled = false;
				message.replaceChildren(el('p', { class: 'error', 'data-testid': 'create-error', text: error.message }));
			});
		});
		app.replaceChildren(el('h1', { text: 'New campaign' }), form);
		return Promise.resolve();
	}

	/** What the create accepted and refused, with the first refused rows and their lines. */
	function summary(answer) {
		var rows = (answer.rejections || []).map(function (r) { return el('tr', {}, [el('td', { text: String(r.line) }), el('td', { text: r.phone }), el('td', { text: r.reason })]); });
		return el('section', { class: 'created', 'data-testid': 'create-summary' }, [
			el('p', { text: 'Created: ' + answer.accepted + ' recipients accepted, ' + answer.rejected + ' rejected' + (answer.rejected > rows.length ? ' (the first ' + rows.length + ' below; the report has them all)' : '') + '.' }),
			rows.length ? C.table(['Line', 'Phone', 'Reason'], rows, { 'data-testid': 'create-rejections' }) : el('span'),
		]);
	}

	C.views.create = { show: show, summary: summary };
})();
