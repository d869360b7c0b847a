// The live runs feed (SSE read with fetch: EventSource cannot send an API key); reconnects when it drops.
(function (inspector) {
  "use strict";
  var state = inspector.state;

  function onFeed(name, message) {
    if (name === "snapshot") {
      state.runs = new Map();
      message.runs.forEach(function (run) {
        state.runs.set(run.runId, run);
      });
      inspector.renderRuns();
      inspector.renderSelectedRun();
      // "live" once the table shows the feed's snapshot, not when the headers arrive: until then it shows nothing current.
      inspector.$("connection").textContent = "live";
    } else if (name === "run") {
      var before = state.runs.get(message.run.runId);
      state.runs.set(message.run.runId, message.run);
      inspector.renderRuns();
      inspector.renderSelectedRun();
      if (before && before.status === "running" && message.run.status !== "running") {
        inspector.loadStored();
        // The run's last nodes are committed before it answers: read them now.
        var selected = state.selected;
        if (selected && selected.kind === "run" && selected.runId === message.run.runId && state.graph && !state.graph.more) inspector.loadNodes();
      }
    } else if (name === "run-event") {
      var selected = state.selected;
      if (!selected || selected.kind !== "run" || selected.runId !== message.runId) return;
      var runEvent = message.event;
      if (runEvent.type === "node") inspector.onNodeEvent(runEvent);
      else if (runEvent.type === "loop-warning" || runEvent.type === "loop-block" || runEvent.type === "guard-refusal") inspector.mark(runEvent);
    }
  }
  function connectFeed() {
    if (state.feed) state.feed.abort();
    var controller = new AbortController();
    state.feed = controller;
    fetch("/v1/runs/events", { headers: inspector.headers({ accept: "text/event-stream" }), signal: controller.signal })
      .then(function (response) {
        if (response.status === 401) {
          inspector.askToken();
          return;
        }
        if (!response.ok || !response.body) throw new Error("HTTP " + response.status);
        var reader = response.body.getReader();
        var decoder = new TextDecoder();
        var buffer = "";
        var pump = function () {
          return reader.read().then(function (chunk) {
            if (chunk.done) throw new Error("the feed closed");
            buffer += decoder.decode(chunk.value, { stream: true });
            var end;
            while ((end = buffer.indexOf("\n\n")) >= 0) {
              var raw = buffer.slice(0, end);
              buffer = buffer.slice(end + 2);
              var name = "message";
              var data = "";
              raw.split("\n").forEach(function (line) {
                if (line.indexOf("event: ") === 0) name = line.slice(7);
                else if (line.indexOf("data: ") === 0) data += line.slice(6);
              });
              if (data) onFeed(name, JSON.parse(data));
            }
            return pump();
          });
        };
        return pump();
      })
      .catch(function () {
        if (controller.signal.aborted) return;
        inspector.$("connection").textContent = "reconnecting…";
        setTimeout(connectFeed, 2000);
      });
  }

  Object.assign(inspector, { connectFeed: connectFeed });
})(window.reinInspector);
