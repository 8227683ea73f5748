// The console's router: the list (#/), a new campaign (#/new) and a campaign's page
// (#/campaigns/:id). The list and a campaign's page refresh every 2 s from the API.
(function () {
	'use strict';
	var C = window.ConvoConsole;
	var app = document.getElementById('app');
	var timer = null;
	var view = null;

	function showError(page, error) {
		if (error.message !== 'signed out') page.replaceChildren(C.el('p', { class: 'error', text: C.errorText(error) }));
	}

	/**
	 * Each navigation renders into a page of its own: an answer that arrives after the operator moved on
	 * (a slow refresh of the list) fills a page no longer shown instead of replacing the current one.
	 */
	function route() {
		if (timer) clearInterval(timer);
		timer = null;
		if (view && view.destroy) view.destroy();
		view = null;
		var page = C.el('div', { class: 'page' });
		app.replaceChildren(page);
		var match = /^#\/campaigns\/([A-Za-z0-9_-]+)$/.exec(location.hash);
		if (location.hash === '#/new') {
			C.views.create.show(page);
			return;
		}
		view = match ? C.views.campaign.open(page, match[1]) : C.views.list.open(page);
		var refresh = view.refresh;
		var tick = function () {
			refresh().catch(function (error) {
				showError(page, error);
			});
		};
		tick();
		timer = setInterval(tick, 2000);
	}
	window.addEventListener('hashchange', route);
	route();
})();
