// The console's router. Each page registers itself with C.page() in its own file (a hash pattern,
// the function that opens it, and how often it refreshes from the API); the campaign list (#/) is
// shown for any hash no page claims.
(function () {
	'use strict';
	var C = window.ConvoConsole;
	var app = document.getElementById('app');
	var timer = null;
	var view = null;
	var REFRESH_MS = 2000;

	function showError(page, error) {
		if (error.message !== 'signed out') page.replaceChildren(C.el('p', { class: 'error', text: C.errorText(error) }));
	}

	function pageFor(hash) {
		for (var i = 0; i < C.pages.length; i += 1) {
			var match = C.pages[i].pattern.exec(hash);
			if (match) return { page: C.pages[i], match: match };
		}
		return { page: C.pages.fallback, match: [hash] };
	}

	/** The header's link to the page shown is marked current (a page under it, such as a campaign, counts). */
	function markCurrent(hash, found) {
		Array.prototype.forEach.call(document.querySelectorAll('header nav a[href^="#"]'), function (link) {
			var target = link.getAttribute('href');
			var current =
				target === '#/'
					? found.page === C.pages.fallback || hash.indexOf('#/campaigns/') === 0
					: hash === target || hash.indexOf(target + '/') === 0;
			if (current) link.setAttribute('aria-current', 'page');
			else link.removeAttribute('aria-current');
		});
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
		var element = C.el('div', { class: 'page' });
		app.replaceChildren(element);
		var found = pageFor(location.hash);
		markCurrent(location.hash, found);
		view = found.page.open(element, found.match) || null;
		if (!view || !view.refresh) return;
		var refresh = view.refresh;
		var tick = function () {
			refresh().catch(function (error) {
				showError(element, error);
			});
		};
		tick();
		var every = found.page.refreshMs === undefined ? REFRESH_MS : found.page.refreshMs;
		if (every > 0) timer = setInterval(tick, every);
	}
	window.addEventListener('hashchange', route);
	route();
})();
