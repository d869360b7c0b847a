// How numbers, times and values are written.
(function (inspector) {
  "use strict";
  function elapsedOf(run) {
    var end = run.endedAt || Date.now();
    return duration(end - run.startedAt);
  }
  function duration(ms) {
    if (!(ms >= 0)) return "—";
    if (ms < 1000) return Math.round(ms) + " ms";
    if (ms < 59950) return (ms / 1000).toFixed(1) + " s";
    var s = Math.round(ms / 1000);
    return Math.floor(s / 60) + " min " + (s % 60) + " s";
  }
  function tokens(n) {
    return n >= 10000 ? (n / 1000).toFixed(1) + "k" : String(n);
  }
  function cost(n) {
    return "$" + (n || 0).toFixed(n >= 1 ? 2 : 4);
  }
  function json(value) {
    try {
      return JSON.stringify(value, null, 2);
    } catch (error) {
      return String(value);
    }
  }
  function statusBadge(status) {
    return inspector.el("span", { class: "status status-" + status, text: status });
  }

  Object.assign(inspector, { elapsedOf: elapsedOf, duration: duration, tokens: tokens, cost: cost, json: json, statusBadge: statusBadge });
})(window.reinInspector);
