// Steering: Stop, Resume, and the tool calls waiting for Approve or Deny.
(function (inspector) {
  "use strict";
  var el = inspector.el;

  function runPath(runId) {
    return "/v1/runs/" + encodeURIComponent(runId);
  }
  function stop(runId) {
    inspector.api(runPath(runId) + "/cancel", { method: "POST" }).then(
      function () {
        inspector.notice("Stopping run " + runId + "…");
      },
      function (error) {
        inspector.notice("Stop failed: " + error.message);
      },
    );
  }
  function resume(runId) {
    inspector.notice("Resuming run " + runId + "…");
    inspector.api(runPath(runId) + "/resume", { method: "POST", body: "{}" }).then(
      function (answer) {
        inspector.notice("Run " + runId + ": " + answer.status);
        inspector.loadStored();
      },
      function (error) {
        inspector.notice("Resume failed: " + error.message);
        inspector.loadStored();
      },
    );
  }
  function answerApproval(runId, toolCallId, approve) {
    inspector.api(runPath(runId) + "/approvals/" + encodeURIComponent(toolCallId), { method: "POST", body: JSON.stringify({ approve: approve }) }).then(
      function (answer) {
        // A paused turn's answer comes back once its resumed turn has ended.
        var resumed = answer && answer.resumed ? "; the resumed turn " + (answer.resumed.result && answer.resumed.result.status ? answer.resumed.result.status : answer.resumed.status) : "";
        inspector.notice((approve ? "Approved " : "Denied ") + toolCallId + resumed);
      },
      function (error) {
        inspector.notice("Answer failed: " + error.message);
      },
    );
  }
  function renderApprovals(run) {
    var box = inspector.$("approvals");
    box.textContent = "";
    var waiting = (run && run.approvals) || [];
    if (waiting.length === 0) {
      box.hidden = true;
      return;
    }
    box.hidden = false;
    box.appendChild(el("h3", { text: "Waiting for approval" }));
    waiting.forEach(function (call) {
      var buttons = inspector.state.readOnly
        ? []
        : [
            el("button", { type: "button", class: "approve", text: "Approve", "aria-describedby": "approval-" + call.toolCallId, onclick: function () { answerApproval(run.runId, call.toolCallId, true); } }),
            el("button", { type: "button", class: "danger", text: "Deny", "aria-describedby": "approval-" + call.toolCallId, onclick: function () { answerApproval(run.runId, call.toolCallId, false); } }),
          ];
      box.appendChild(
        el("div", { class: "approval", role: "group", "aria-labelledby": "approval-" + call.toolCallId }, [
          el("p", { id: "approval-" + call.toolCallId }, [el("strong", { text: call.toolName }), " wants to run with:"]),
          el("pre", { text: inspector.json(call.input) }),
          el("p", { class: "buttons" }, buttons),
        ]),
      );
    });
  }

  Object.assign(inspector, { stop: stop, resume: resume, renderApprovals: renderApprovals });
})(window.reinInspector);
