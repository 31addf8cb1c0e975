// The dashboard's only script: the live view. When notes change on disk (an agent wrote
// one, an editor saved one) the server says so over server-sent events, and a page that
// lists notes fetches itself again and swaps in its new <main>: no reload, no lost scroll.
(function () {
  "use strict";
  var main = document.getElementById("main");
  var badge = document.getElementById("live-status");
  if (!main || !window.EventSource) { return; }
  var busy = false, again = false;
  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(window.location.href, { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (!html) { return; }
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.getElementById("main");
        var focused = document.activeElement && main.contains(document.activeElement);
        if (fresh && !focused) { main.replaceChildren.apply(main, Array.from(fresh.childNodes)); }
      })
      .catch(function () {})
      .finally(function () { busy = false; if (again) { again = false; refresh(); } });
  }
  var source = new EventSource("/events");
  source.addEventListener("notes", function (event) {
    var changed = [];
    try { changed = JSON.parse(event.data); } catch (e) { changed = []; }
    badge.hidden = false;
    badge.textContent = changed.length + " note" + (changed.length === 1 ? "" : "s") + " changed";
    if (main.dataset.live) { refresh(); }
  });
  source.onerror = function () { badge.hidden = false; badge.textContent = "live view paused"; };
  source.onopen = function () { badge.hidden = true; };
})();
