// New campaign: a CSV uploaded through POST /api/campaigns (the settings in the query string, as
// the API takes an upload) or a URL the runner reads (JSON; a cron schedule needs one), its
// accepted and rejected counts shown on the campaign's page.
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
			file: el('input', { name: 'file', type: 'file', accept: '.csv,text/csv', 'data-testid': 'create-file' }),
			source_url: el('input', { name: 'source_url', type: 'url', 'data-testid': 'create-source-url', placeholder: 'https://example.com/recipients.csv' }),
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
			field('…or their URL', inputs.source_url, 'read by the runner; a cron schedule needs one, as it re-reads it at each run'),
			field('Template id', inputs.template_id),
			field('Number (from)', inputs.from),
			field('Rate (sends per second)', inputs.rate),
			field('Start at', inputs.at, 'optional; empty starts now'),
			field('Repeat (cron)', inputs.cron, 'optional; a schedule of campaigns from the URL above'),
			field('Time zone of the cron', inputs.tz),
			el('div', { class: 'actions' }, [submit, el('a', { class: 'button', href: '#/' }, ['Back'])]),
			message,
		]);
		form.addEventListener('submit', function (event) {
			event.preventDefault();
			var file = inputs.file.files[0];
			var url = inputs.source_url.value.trim();
			if (Boolean(file) === Boolean(url)) {
				message.replaceChildren(el('p', { class: 'error', 'data-testid': 'create-error', text: 'Recipients: choose a CSV file or give its URL (one of them).' }));
				return;
			}
			var settings = {};
			['template_id', 'from', 'rate', 'cron', 'tz', 'name'].forEach(function (key) {
				// Only what is filled: an empty setting would be refused, and the API may not know `name` yet.
				if (inputs[key].value.trim() !== '') settings[key] = inputs[key].value.trim();
			});
			if (inputs.at.value) settings.at = new Date(inputs.at.value).toISOString();
			submit.disabled = true;
			message.replaceChildren(el('p', { text: file ? 'Uploading…' : 'Creating…' }));
			// A file goes as the body with the settings in the query (the API's upload); a URL as JSON.
			var sent = file
				? C.api('POST', '/api/campaigns?' + new URLSearchParams(settings).toString(), { raw: file, type: 'text/csv' })
				: C.api('POST', '/api/campaigns', Object.assign(settings, { source_url: url }, settings.rate ? { rate: Number(settings.rate) } : {}));
			sent.then(function (answer) {
				if (answer.kind === 'schedule') {
					message.replaceChildren(el('p', { 'data-testid': 'create-schedule', text: 'Schedule ' + answer.schedule.id + ' created: ' + answer.schedule.cron + ' (' + answer.schedule.tz + '); each run is a campaign of its own in the list.' }));
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
