// toolgate console: the live parts only. Pages work without it; it keeps
// countdowns ticking and applies server-sent updates (/console/events).
"use strict";
(function () {
  function fmt(ms) {
    var s = Math.floor(ms / 1000);
    if (s < 60) return s + "s";
    var m = Math.floor(s / 60);
    if (m < 60) return m + "m" + String(s % 60).padStart(2, "0") + "s";
    return Math.floor(m / 60) + "h" + String(m % 60).padStart(2, "0") + "m";
  }
  function tick() {
    document.querySelectorAll("[data-expires]").forEach(function (el) {
      var left = Date.parse(el.getAttribute("data-expires")) - Date.now();
      el.textContent = left > 0 ? "in " + fmt(left) : "expired";
      el.classList.toggle("alert", left <= 60000);
    });
  }
  function apply(items) {
    items.forEach(function (it) {
      document.querySelectorAll('[data-live="' + CSS.escape(it.k) + '"]').forEach(function (el) {
        el.textContent = it.t;
        if (it.a !== undefined) el.classList.toggle("alert", !!it.a);
      });
    });
  }
  function listen() {
    var topic = document.body.getAttribute("data-events");
    if (!topic) return;
    var es = new EventSource("/console/events?topic=" + encodeURIComponent(topic));
    es.addEventListener("live", function (e) { apply(JSON.parse(e.data)); });
    es.addEventListener("reload", function () { es.close(); location.reload(); });
  }
  function selectAll() {
    var all = document.querySelector("[data-action=select-all]");
    if (!all) return;
    all.addEventListener("change", function () {
      document.querySelectorAll("input[type=checkbox][name=seq]").forEach(function (c) { c.checked = all.checked; });
    });
  }
  document.addEventListener("DOMContentLoaded", function () {
    tick();
    setInterval(tick, 1000);
    selectAll();
    listen();
  });
})();
