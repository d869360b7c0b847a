// The Runs table (live runs, then resumable runs from the store) and the Sessions table.
(function (inspector) {
  "use strict";
  var state = inspector.state;
  var $ = inspector.$;
  var el = inspector.el;

  function renderRuns() {
    var body = $("runs").tBodies[0];
    body.textContent = "";
    var live = Array.from(state.runs.values()).sort(function (a, b) {
      return b.startedAt - a.startedAt;
    });
    live.forEach(function (run) {
      var selected = state.selected && state.selected.kind === "run" && state.selected.runId === run.runId;
      var actions = [];
      // A queued background run can be stopped too: it ends cancelled without running.
      if (!state.readOnly && (run.status === "running" || run.status === "queued")) {
        actions.push(el("button", { type: "button", class: "danger", text: "Stop", "aria-describedby": "run-" + run.runId, onclick: function () { inspector.stop(run.runId); } }));
      }
      body.appendChild(
        el("tr", { class: selected ? "selected" : "", "data-run-id": run.runId }, [
          el("th", { scope: "row" }, [el("button", { type: "button", class: "link", id: "run-" + run.runId, title: "run " + run.runId, "aria-pressed": selected ? "true" : "false", text: run.entry, onclick: function () { inspector.selectRun(run.runId); } })]),
          el("td", {}, [inspector.statusBadge(run.status), run.approvals && run.approvals.length > 0 ? el("span", { class: "waiting", text: run.approvals.length + " waiting" }) : null]),
          el("td", { class: "num elapsed", "data-started": run.startedAt, text: inspector.elapsedOf(run) }),
          el("td", { class: "num", text: String(run.requests) }),
          el("td", { class: "num", text: inspector.tokens(run.inputTokens + run.outputTokens) }),
          el("td", { class: "num", text: inspector.cost(run.costUsd) }),
          el("td", { class: "actions" }, actions),
        ]),
      );
    });
    state.stored.forEach(function (record) {
      var actions = [];
      // An interrupted run (restart, crash) or a failed one continues where it stopped: finished steps are not re-run.
      if (!state.readOnly && (record.state === "interrupted" || record.state === "error")) {
        actions.push(el("button", { type: "button", text: "Resume", "aria-describedby": "stored-" + record.runId, onclick: function () { inspector.resume(record.runId); } }));
      }
      body.appendChild(
        el("tr", { "data-run-id": record.runId }, [
          el("th", { scope: "row" }, [el("button", { type: "button", class: "link", id: "stored-" + record.runId, title: "resumable run " + record.runId, text: record.name, onclick: function () { inspector.selectSession(record.sessionId); } })]),
          el("td", {}, [inspector.statusBadge(record.state)]),
          el("td", { class: "num", text: inspector.duration(record.updatedAt - record.createdAt) }),
          el("td", { class: "num", text: "—" }),
          el("td", { class: "num", text: "—" }),
          el("td", { class: "num", text: "—" }),
          el("td", { class: "actions" }, actions),
        ]),
      );
    });
    if (live.length === 0 && state.stored.length === 0) body.appendChild(el("tr", {}, [el("td", { colspan: "7", class: "empty", text: "No runs yet." })]));
  }
  function tickElapsed() {
    Array.prototype.forEach.call(document.querySelectorAll("#runs td.elapsed"), function (cell) {
      var run = state.runs.get(cell.parentNode.getAttribute("data-run-id"));
      if (run && run.status === "running") cell.textContent = inspector.elapsedOf(run);
    });
  }
  function renderSessions(sessions) {
    var body = $("sessions").tBodies[0];
    body.textContent = "";
    sessions.forEach(function (session) {
      body.appendChild(
        el("tr", {}, [
          el("th", { scope: "row" }, [el("button", { type: "button", class: "link", text: session.title || session.id, title: session.id, onclick: function () { inspector.selectSession(session.id); } })]),
          el("td", { class: "num", text: String(session.nodeCount) }),
          el("td", { text: new Date(session.updatedAt).toLocaleTimeString() }),
        ]),
      );
    });
    if (sessions.length === 0) body.appendChild(el("tr", {}, [el("td", { colspan: "3", class: "empty", text: "No sessions yet." })]));
  }
  function loadStored() {
    return Promise.all([inspector.api("/inspector/api/runs"), inspector.api("/inspector/api/sessions")]).then(
      function (answers) {
        state.stored = answers[0].runs;
        renderRuns();
        renderSessions(answers[1].sessions);
      },
      function (error) {
        inspector.notice(error.message);
      },
    );
  }

  Object.assign(inspector, { renderRuns: renderRuns, tickElapsed: tickElapsed, loadStored: loadStored });
})(window.reinInspector);
