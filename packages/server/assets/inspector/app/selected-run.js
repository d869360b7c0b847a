// The selected run or session: its title and a running run's reach gauge.
(function (inspector) {
  "use strict";
  var state = inspector.state;
  var $ = inspector.$;
  var el = inspector.el;

  function meter(name, used, limit, text) {
    var max = limit === null || limit === undefined ? Math.max(used, 1) : Math.max(limit, 0.000001);
    var id = "meter-" + name.toLowerCase();
    return el("div", { class: "gauge" }, [
      el("label", { for: id, text: name }),
      el("meter", { id: id, min: "0", max: String(max), value: String(Math.min(used, max)), high: String(max * 0.8), optimum: "0", "aria-valuetext": text }),
      el("span", { class: "gauge-text", text: text }),
    ]);
  }
  function renderReach(run) {
    var box = $("reach");
    box.textContent = "";
    var reach = run && run.reach;
    if (!reach) {
      box.hidden = true;
      return;
    }
    box.hidden = false;
    var limitText = function (value, format) {
      return value === null ? "unlimited" : format(value);
    };
    var tokens = inspector.tokens;
    var cost = inspector.cost;
    var duration = inspector.duration;
    var deadlineLimit = reach.remainingMs === null ? null : reach.elapsedMs + reach.remainingMs;
    box.appendChild(el("h3", { text: "Reach" }));
    box.appendChild(meter("Depth", reach.depth.used, reach.depth.limit, reach.depth.used + " / " + limitText(reach.depth.limit, String)));
    box.appendChild(meter("Tokens", reach.tokens.used, reach.tokens.limit, tokens(reach.tokens.used) + " / " + limitText(reach.tokens.limit, tokens)));
    box.appendChild(meter("Cost", reach.costUsd.used, reach.costUsd.limit, cost(reach.costUsd.used) + " / " + limitText(reach.costUsd.limit, cost)));
    box.appendChild(meter("Deadline", reach.elapsedMs, deadlineLimit, duration(reach.elapsedMs) + " / " + limitText(deadlineLimit, duration)));
    box.appendChild(meter("Memory", reach.memoryMb.used, reach.memoryMb.limit, reach.memoryMb.used.toFixed(1) + " MB / " + limitText(reach.memoryMb.limit, function (v) { return v + " MB"; })));
    box.appendChild(el("p", { class: "zone", text: "Zone: " + reach.zone }));
  }
  function renderSelectedRun() {
    if (!state.selected || state.selected.kind !== "run") return;
    var run = state.runs.get(state.selected.runId);
    if (!run) return;
    var title = $("run-title");
    title.textContent = "";
    title.className = "run-title";
    title.appendChild(document.createTextNode(run.entry + " "));
    title.appendChild(inspector.statusBadge(run.status));
    // Stop beside the run too: on a narrow screen the table's last column may be scrolled out of view.
    if (!state.readOnly && (run.status === "running" || run.status === "queued")) {
      title.appendChild(el("button", { type: "button", class: "danger", text: "Stop", "aria-describedby": "run-title", onclick: function () { inspector.stop(run.runId); } }));
    }
    if (run.error) inspector.notice(run.error.name + ": " + run.error.message);
    renderReach(run);
    inspector.renderApprovals(run);
  }
  function selectRun(runId) {
    var run = state.runs.get(runId);
    if (!run) return;
    state.selected = { kind: "run", runId: runId };
    inspector.renderRuns();
    renderSelectedRun();
    inspector.openGraph(run.sessionId);
  }
  function selectSession(sessionId) {
    state.selected = { kind: "session", sessionId: sessionId };
    inspector.renderRuns();
    $("run-title").textContent = "Session " + sessionId;
    renderReach(null);
    inspector.renderApprovals(null);
    inspector.openGraph(sessionId);
  }

  Object.assign(inspector, { renderSelectedRun: renderSelectedRun, selectRun: selectRun, selectSession: selectSession });
})(window.reinInspector);
