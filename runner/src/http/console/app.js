// The console's router: the list (#/), a new campaign (#/new) and a campaign's page
// (#/campaigns/:id). The list and a campaign's page refresh every 2 s from the API.
(function () {
	'use strict';
	var C = window.ConvoConsole;
	var app = document.getElementById('app');
	var timer = null;
	var view = null;

	function showError(error) {
		if (error.message !== 'signed out') app.replaceChildren(C.el('p', { class: 'error', text: error.message }));
	}

	function route() {
		if (timer) clearInterval(timer);
		timer = null;
		if (view && view.destroy) view.destroy();
		view = null;
		var match = /^#\/campaigns\/([A-Za-z0-9_-]+)$/.exec(location.hash);
		if (location.hash === '#/new') {
			C.views.create.show(app);
			return;
		}
		var refresh;
		if (match) {
			view = C.views.campaign.open(app, match[1]);
			refresh = view.refresh;
		} else {
			refresh = function () { return C.views.list.show(app); };
		}
		var tick = function () { refresh().catch(showError); };
		tick();
		timer = setInterval(tick, 2000);
	}
	window.addEventListener('hashchange', route);
	route();
})();
