/**
 * The console's one script, served at `/console/assets/console.js` (the CSP allows scripts from
 * the server only, never inline). It keeps relative times fresh and applies the live stream's
 * rows: each is HTML the server rendered (every T3 text escaped there), put in the list its
 * thread now belongs to. A dropped stream reconnects and redraws the page's main part from the
 * server. Without it the page works by reload. `window.t3console` says what it did (tests).
 */
export const CONSOLE_SCRIPT = `(() => {
"use strict";
const state = (window.t3console = { state: "starting", rows: 0, redraws: 0 });
const rel = (at) => {
	const s = Math.round((Date.now() - at) / 1000), a = Math.abs(s);
	const say = (n, u) => (s >= 0 ? n + " " + u + " ago" : "in " + n + " " + u);
	if (a < 10) return s >= 0 ? "just now" : "in a moment";
	if (a < 60) return say(a, "s");
	if (a < 3600) return say(Math.round(a / 60), "min");
	if (a < 86400) return say(Math.round(a / 3600), "h");
	return say(Math.round(a / 86400), "d");
};
const refreshTimes = () => {
	for (const t of document.querySelectorAll("time[data-rel]")) {
		const at = Date.parse(t.dateTime);
		if (!Number.isNaN(at)) t.textContent = rel(at);
	}
};
setInterval(refreshTimes, 15000);
const source = document.body.dataset.live;
if (!source || !window.EventSource) return;
const find = (attr, value) => document.querySelector("[" + attr + '="' + CSS.escape(value) + '"]');
const element = (html) => {
	const t = document.createElement("template");
	t.innerHTML = html;
	return t.content.firstElementChild;
};
const tidy = (list) => {
	if (!list) return;
	const rows = list.querySelectorAll(":scope > .row").length;
	const count = list.parentElement && list.parentElement.querySelector("h2 .count");
	if (count) count.textContent = String(rows);
	const empty = list.querySelector(":scope > .empty");
	if (rows > 0 && empty) empty.remove();
	if (rows === 0 && !empty) {
		const li = document.createElement("li");
		li.className = "empty";
		li.textContent = "Nothing here now.";
		list.append(li);
	}
};
const pageThread = () => {
	const h = document.querySelector("[data-thread-page]");
	return h ? h.getAttribute("data-thread-page") : null;
};
const busy = () => {
	const a = document.activeElement;
	if (a && a.closest("form") && /^(INPUT|TEXTAREA|SELECT)$/.test(a.tagName)) return true;
	for (const f of document.querySelectorAll("main input[type=text], main textarea"))
		if (f.value !== "") return true;
	// A choice made but not sent yet is the person's work too.
	return document.querySelector("main input:checked") !== null;
};
let redrawing = false;
let lastRedraw = 0;
let pending = null;
// At most one redraw a second: a busy thread changes many times a second.
const redrawSoon = () => {
	if (pending !== null) return;
	const wait = Math.max(0, lastRedraw + 1000 - Date.now());
	pending = setTimeout(() => {
		pending = null;
		redraw();
	}, wait);
};
const redraw = async () => {
	if (redrawing || busy()) return;
	redrawing = true;
	lastRedraw = Date.now();
	try {
		const r = await fetch(location.href, { credentials: "same-origin", headers: { accept: "text/html", "x-console-redraw": "1" } });
		if (r.redirected && new URL(r.url).pathname !== location.pathname) {
			location.assign(r.url);
			return;
		}
		const doc = new DOMParser().parseFromString(await r.text(), "text/html");
		const fresh = doc.getElementById("main");
		const main = document.getElementById("main");
		// The person may have started on a form while the page was being fetched.
		if (fresh && main && !busy()) {
			// What the last action said stays until the person leaves the page.
			const said = main.querySelector(".notice[role=status]");
			const next = document.adoptNode(fresh);
			if (said && !next.querySelector(".notice[role=status]")) {
				const copy = said.cloneNode(true);
				const h1 = next.querySelector("h1");
				if (h1) h1.after(copy);
				else next.prepend(copy);
			}
			main.replaceWith(next);
			state.redraws += 1;
		}
	} catch {
		// Offline for a moment: the next reconnect redraws.
	} finally {
		redrawing = false;
	}
};
const onRow = (d) => {
	if (pageThread() !== null) {
		if (d.id === pageThread()) redrawSoon();
		return;
	}
	const old = find("data-thread", d.id);
	const from = old && old.parentElement;
	const to = d.section ? document.querySelector('ul[data-section="' + d.section + '"]') : null;
	if (to && to.dataset.live === "yes") {
		const row = element(d.html);
		if (old && from === to) old.replaceWith(row);
		else {
			if (old) old.remove();
			to.prepend(row);
		}
	} else if (old) old.remove();
	tidy(from);
	tidy(to);
	state.rows += 1;
};
const connect = () => {
	// When the page's data was read (the server's clock): changes since then come as a redraw.
	const main = document.getElementById("main");
	const since = main ? main.getAttribute("data-since") : null;
	const es = new EventSource(source + (since ? "?since=" + encodeURIComponent(since) : ""));
	es.onopen = () => {
		state.state = "open";
	};
	es.onerror = () => {
		es.close();
		state.state = "reconnecting";
		setTimeout(async () => {
			await redraw();
			connect();
		}, 1000);
	};
	es.addEventListener("row", (e) => onRow(JSON.parse(e.data)));
	es.addEventListener("gone", (e) => onRow({ id: JSON.parse(e.data).id, section: null }));
	es.addEventListener("machine", (e) => {
		const d = JSON.parse(e.data);
		const old = find("data-machine", d.name);
		if (old) old.replaceWith(element(d.html));
		else {
			// A large fleet lists only the machines that need a look: this one may now.
			const list = document.querySelector('ul[data-section="machines"]');
			if (list && list.dataset.all === "no") redrawSoon();
		}
		state.rows += 1;
	});
	es.addEventListener("redraw", () => redrawSoon());
};
connect();
})();
`;
