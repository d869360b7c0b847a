// Rein Inspector: a plain script (no framework, no build step, no CDN) served by @rein/server at /inspector.
// Runs come live from GET /v1/runs/events (SSE read with fetch, so an API key can be sent); a run's
// graph is read a page at a time from /inspector/api/sessions/:id/nodes and grows on its `node` events.
"use strict";
(function () {
  // The first page is a screenful and more (50 rows fill 800 px twice): on screen sooner; later pages are larger.
  var FIRST_PAGE = 50;
  var PAGE = 200;
  var state = {
    token: sessionStorage.getItem("rein.inspector.token") || "",
    readOnly: true,
    runs: new Map(), // runId -> RunSummary (live feed)
    stored: [], // RunRecord[] (resumable runs in the store)
    selected: null, // { kind: "run", runId } | { kind: "session", sessionId }
    graph: null, // { sessionId, nodes: Map, order: [], depth: Map, lastSeq, total, more, loading, marks: Map }
    nodeDetail: null,
    feed: null,
  };

  function $(id) {
    return document.getElementById(id);
  }
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) {
      for (var key in attrs) {
        var value = attrs[key];
        if (value === undefined || value === null || value === false) continue;
        if (key === "text") node.textContent = value;
        else if (key === "class") node.className = value;
        else if (key.slice(0, 2) === "on") node.addEventListener(key.slice(2), value);
        else node.setAttribute(key, value === true ? "" : String(value));
      }
    }
    (children || []).forEach(function (child) {
      if (child !== null && child !== undefined) node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }
  function headers(extra) {
    var result = Object.assign({ accept: "application/json" }, extra || {});
    if (state.token) result.authorization = "Bearer " + state.token;
    return result;
  }
  function api(path, options) {
    options = options || {};
    // The page's head asked for a linked session's first page while the rest was parsed: take that answer, once.
    var early = window.reinEarly;
    var sent = early && early.path === path && !options.method ? early.response : null;
    if (sent) window.reinEarly = null;
    return (sent || fetch(path, { method: options.method || "GET", headers: headers(options.body ? { "content-type": "application/json" } : {}), body: options.body })).then(function (response) {
      if (response.status === 401) askToken();
      return response.json().then(
        function (body) {
          if (!response.ok) throw new Error((body && body.error && body.error.message) || "HTTP " + response.status);
          return body;
        },
        function () {
          throw new Error("HTTP " + response.status);
        },
      );
    });
  }
  function notice(text) {
    $("notice").textContent = text;
  }
  function askToken() {
    $("token-form").hidden = false;
    $("connection").textContent = "needs an API key";
  }

  // ---- formatting -------------------------------------------------------------------------------
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
    return el("span", { class: "status status-" + status, text: status });
  }

  // ---- runs table -------------------------------------------------------------------------------
  function renderRuns() {
    var body = $("runs").tBodies[0];
    body.textContent = "";
    var live = Array.from(state.runs.values()).sort(function (a, b) {
      return b.startedAt - a.startedAt;
    });
    live.forEach(function (run) {
      var selected = state.selected && state.selected.kind === "run" && state.selected.runId === run.runId;
      var actions = [];
      if (!state.readOnly && run.status === "running") {
        actions.push(el("button", { type: "button", class: "danger", text: "Stop", "aria-describedby": "run-" + run.runId, onclick: function () { stop(run.runId); } }));
      }
      body.appendChild(
        el("tr", { class: selected ? "selected" : "", "data-run-id": run.runId }, [
          el("th", { scope: "row" }, [el("button", { type: "button", class: "link", id: "run-" + run.runId, title: "run " + run.runId, "aria-pressed": selected ? "true" : "false", text: run.entry, onclick: function () { selectRun(run.runId); } })]),
          el("td", {}, [statusBadge(run.status), run.approvals && run.approvals.length > 0 ? el("span", { class: "waiting", text: run.approvals.length + " waiting" }) : null]),
          el("td", { class: "num elapsed", "data-started": run.startedAt, text: elapsedOf(run) }),
          el("td", { class: "num", text: String(run.requests) }),
          el("td", { class: "num", text: tokens(run.inputTokens + run.outputTokens) }),
          el("td", { class: "num", text: cost(run.costUsd) }),
          el("td", { class: "actions" }, actions),
        ]),
      );
    });
    state.stored.forEach(function (record) {
      var actions = [];
      // An interrupted run (restart, crash) or a failed one continues where it stopped: finished steps are not re-run.
      if (!state.readOnly && (record.state === "interrupted" || record.state === "error")) {
        actions.push(el("button", { type: "button", text: "Resume", "aria-describedby": "stored-" + record.runId, onclick: function () { resume(record.runId); } }));
      }
      body.appendChild(
        el("tr", { "data-run-id": record.runId }, [
          el("th", { scope: "row" }, [el("button", { type: "button", class: "link", id: "stored-" + record.runId, title: "resumable run " + record.runId, text: record.name, onclick: function () { selectSession(record.sessionId); } })]),
          el("td", {}, [statusBadge(record.state)]),
          el("td", { class: "num", text: duration(record.updatedAt - record.createdAt) }),
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
      if (run && run.status === "running") cell.textContent = elapsedOf(run);
    });
  }
  function renderSessions(sessions) {
    var body = $("sessions").tBodies[0];
    body.textContent = "";
    sessions.forEach(function (session) {
      body.appendChild(
        el("tr", {}, [
          el("th", { scope: "row" }, [el("button", { type: "button", class: "link", text: session.title || session.id, title: session.id, onclick: function () { selectSession(session.id); } })]),
          el("td", { class: "num", text: String(session.nodeCount) }),
          el("td", { text: new Date(session.updatedAt).toLocaleTimeString() }),
        ]),
      );
    });
    if (sessions.length === 0) body.appendChild(el("tr", {}, [el("td", { colspan: "3", class: "empty", text: "No sessions yet." })]));
  }
  function loadStored() {
    return Promise.all([api("/inspector/api/runs"), api("/inspector/api/sessions")]).then(
      function (answers) {
        state.stored = answers[0].runs;
        renderRuns();
        renderSessions(answers[1].sessions);
      },
      function (error) {
        notice(error.message);
      },
    );
  }

  // ---- steering ---------------------------------------------------------------------------------
  function stop(runId) {
    api("/v1/runs/" + encodeURIComponent(runId) + "/cancel", { method: "POST" }).then(
      function () {
        notice("Stopping run " + runId + "…");
      },
      function (error) {
        notice("Stop failed: " + error.message);
      },
    );
  }
  function resume(runId) {
    notice("Resuming run " + runId + "…");
    api("/v1/runs/" + encodeURIComponent(runId) + "/resume", { method: "POST", body: "{}" }).then(
      function (answer) {
        notice("Run " + runId + ": " + answer.status);
        loadStored();
      },
      function (error) {
        notice("Resume failed: " + error.message);
        loadStored();
      },
    );
  }
  function answerApproval(runId, toolCallId, approve) {
    api("/v1/runs/" + encodeURIComponent(runId) + "/approvals/" + encodeURIComponent(toolCallId), { method: "POST", body: JSON.stringify({ approve: approve }) }).then(
      function (answer) {
        // A paused turn's answer comes back once its resumed turn has ended.
        var resumed = answer && answer.resumed ? "; the resumed turn " + (answer.resumed.result && answer.resumed.result.status ? answer.resumed.result.status : answer.resumed.status) : "";
        notice((approve ? "Approved " : "Denied ") + toolCallId + resumed);
      },
      function (error) {
        notice("Answer failed: " + error.message);
      },
    );
  }

  // ---- the selected run: reach gauge, approvals -------------------------------------------------
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
    var deadlineLimit = reach.remainingMs === null ? null : reach.elapsedMs + reach.remainingMs;
    box.appendChild(el("h3", { text: "Reach" }));
    box.appendChild(meter("Depth", reach.depth.used, reach.depth.limit, reach.depth.used + " / " + limitText(reach.depth.limit, String)));
    box.appendChild(meter("Tokens", reach.tokens.used, reach.tokens.limit, tokens(reach.tokens.used) + " / " + limitText(reach.tokens.limit, tokens)));
    box.appendChild(meter("Cost", reach.costUsd.used, reach.costUsd.limit, cost(reach.costUsd.used) + " / " + limitText(reach.costUsd.limit, cost)));
    box.appendChild(meter("Deadline", reach.elapsedMs, deadlineLimit, duration(reach.elapsedMs) + " / " + limitText(deadlineLimit, duration)));
    box.appendChild(meter("Memory", reach.memoryMb.used, reach.memoryMb.limit, reach.memoryMb.used.toFixed(1) + " MB / " + limitText(reach.memoryMb.limit, function (v) { return v + " MB"; })));
    box.appendChild(el("p", { class: "zone", text: "Zone: " + reach.zone }));
  }
  function renderApprovals(run) {
    var box = $("approvals");
    box.textContent = "";
    var waiting = (run && run.approvals) || [];
    if (waiting.length === 0) {
      box.hidden = true;
      return;
    }
    box.hidden = false;
    box.appendChild(el("h3", { text: "Waiting for approval" }));
    waiting.forEach(function (call) {
      var buttons = state.readOnly
        ? []
        : [
            el("button", { type: "button", class: "approve", text: "Approve", "aria-describedby": "approval-" + call.toolCallId, onclick: function () { answerApproval(run.runId, call.toolCallId, true); } }),
            el("button", { type: "button", class: "danger", text: "Deny", "aria-describedby": "approval-" + call.toolCallId, onclick: function () { answerApproval(run.runId, call.toolCallId, false); } }),
          ];
      box.appendChild(
        el("div", { class: "approval", role: "group", "aria-labelledby": "approval-" + call.toolCallId }, [
          el("p", { id: "approval-" + call.toolCallId }, [el("strong", { text: call.toolName }), " wants to run with:"]),
          el("pre", { text: json(call.input) }),
          el("p", { class: "buttons" }, buttons),
        ]),
      );
    });
  }
  function renderSelectedRun() {
    if (!state.selected || state.selected.kind !== "run") return;
    var run = state.runs.get(state.selected.runId);
    if (!run) return;
    var title = $("run-title");
    title.textContent = "";
    title.className = "run-title";
    title.appendChild(document.createTextNode(run.entry + " "));
    title.appendChild(statusBadge(run.status));
    // Stop beside the run too: on a narrow screen the table's last column may be scrolled out of view.
    if (!state.readOnly && run.status === "running") {
      title.appendChild(el("button", { type: "button", class: "danger", text: "Stop", "aria-describedby": "run-title", onclick: function () { stop(run.runId); } }));
    }
    if (run.error) notice(run.error.name + ": " + run.error.message);
    renderReach(run);
    renderApprovals(run);
  }

  // ---- graph ------------------------------------------------------------------------------------
  function selectRun(runId) {
    var run = state.runs.get(runId);
    if (!run) return;
    state.selected = { kind: "run", runId: runId };
    renderRuns();
    renderSelectedRun();
    openGraph(run.sessionId);
  }
  function selectSession(sessionId) {
    state.selected = { kind: "session", sessionId: sessionId };
    renderRuns();
    $("run-title").textContent = "Session " + sessionId;
    renderReach(null);
    renderApprovals(null);
    openGraph(sessionId);
  }
  function openGraph(sessionId) {
    state.graph = { sessionId: sessionId, nodes: new Map(), order: [], depth: new Map(), lastSeq: -1, total: 0, more: false, loading: null, marks: new Map(), askedBy: new Map(), refetch: false };
    $("graph").textContent = "";
    $("graph-title").hidden = false;
    $("node").hidden = true;
    loadNodes();
  }
  function loadNodes() {
    var graph = state.graph;
    if (!graph) return Promise.resolve();
    if (graph.loading) {
      graph.refetch = true;
      return graph.loading;
    }
    var url = "/inspector/api/sessions/" + encodeURIComponent(graph.sessionId) + "/nodes?after=" + graph.lastSeq + "&limit=" + (graph.lastSeq === -1 ? FIRST_PAGE : PAGE);
    graph.loading = api(url)
      .then(
        function (page) {
          if (state.graph !== graph) return;
          graph.total = page.total;
          graph.more = page.more;
          page.nodes.forEach(function (node) {
            addNode(node);
          });
          renderMore();
        },
        function (error) {
          // A run's session exists once its first node is committed.
          if (!/no session/.test(error.message)) notice(error.message);
        },
      )
      .then(function () {
        graph.loading = null;
        if (graph.refetch && state.graph === graph && !graph.more) {
          graph.refetch = false;
          return loadNodes();
        }
      });
    return graph.loading;
  }
  function renderMore() {
    var graph = state.graph;
    $("graph-more").hidden = !graph.more;
    $("graph-count").textContent = graph.order.length + " of " + graph.total + " nodes shown";
  }
  function nodeLabel(node) {
    var status = node.metadata && node.metadata.status;
    return node.role + ": " + node.name + (typeof status === "string" ? " (" + status + ")" : "");
  }
  // A recorded session has no run events: what the guards did is read from the next request's input
  // (a refused call's tool result, a loop notice) and marked on the llm node that made the call.
  var REFUSAL = /exceeded max nesting depth|RecursionError|CycleError|ReachError|reach exceeded|cycle detected/i;
  var LOOP = /(loop|repeat)[^]*(warning|blocked)|(warning|blocked)[^]*(loop|repeat)/i;
  function readGuards(node) {
    var graph = state.graph;
    var output = node.output && node.output.content;
    if (Array.isArray(output)) {
      output.forEach(function (block) {
        if (block.type === "tool_use") graph.askedBy.set(block.id, node.id);
      });
    }
    var input = node.input && node.input.content;
    if (!Array.isArray(input)) return;
    input.forEach(function (block) {
      var text = typeof block.text === "string" ? block.text : typeof block.content === "string" ? block.content : "";
      var label = block.type === "tool_result" && block.isError && REFUSAL.test(text) ? "guard refusal" : block.type === "tool_result" && block.isError && /loop/i.test(text) ? "loop block" : null;
      if (label && block.toolUseId) {
        var list = graph.marks.get(block.toolUseId) || [];
        if (list.indexOf(label) < 0) list.push(label);
        graph.marks.set(block.toolUseId, list);
        var asker = graph.nodes.get(graph.askedBy.get(block.toolUseId));
        if (asker && asker.element) updateNodeElement(asker);
      } else if (block.type === "text" && LOOP.test(text)) {
        var own = graph.marks.get(node.id) || [];
        if (own.indexOf("loop warning") < 0) own.push("loop warning");
        graph.marks.set(node.id, own);
      }
    });
  }
  function addNode(node) {
    var graph = state.graph;
    if (node.role === "llm") readGuards(node);
    var known = graph.nodes.get(node.id);
    graph.nodes.set(node.id, node);
    if (typeof node.seq === "number" && node.seq > graph.lastSeq) graph.lastSeq = node.seq;
    if (known && known.element) {
      node.element = known.element;
      node.item = known.item;
      if (known.pending && node.caller && graph.depth.has(node.caller)) {
        graph.depth.set(node.id, graph.depth.get(node.caller) + 1);
        node.item.style.paddingLeft = Math.min(graph.depth.get(node.id), 12) * 1.1 + "rem";
      }
      updateNodeElement(node);
      return;
    }
    var depth = node.caller && graph.depth.has(node.caller) ? graph.depth.get(node.caller) + 1 : 0;
    graph.depth.set(node.id, depth);
    graph.order.push(node.id);
    var button = el("button", { type: "button", class: "graph-node kind-" + node.role, "data-node-id": node.id });
    node.element = button;
    updateNodeElement(node);
    button.addEventListener("click", function () {
      showNode(node.id);
    });
    node.item = el("li", { style: "padding-left:" + Math.min(depth, 12) * 1.1 + "rem" }, [button]);
    $("graph").appendChild(node.item);
  }
  function marksOf(node) {
    var graph = state.graph;
    var marks = [];
    var content = node.output && node.output.content;
    if (node.role === "llm" && Array.isArray(content)) {
      content.forEach(function (block) {
        if (block.type === "tool_use" && graph.marks.has(block.id)) marks = marks.concat(graph.marks.get(block.id));
      });
    }
    if (graph.marks.has(node.id)) marks = marks.concat(graph.marks.get(node.id));
    return marks.filter(function (mark, index) {
      return marks.indexOf(mark) === index;
    });
  }
  function updateNodeElement(node) {
    var button = node.element;
    var status = (node.metadata && node.metadata.status) || "";
    var marks = marksOf(node);
    // The accessible name is exactly the mermaid label; warnings are its description.
    button.setAttribute("aria-label", nodeLabel(node));
    if (marks.length) button.setAttribute("aria-describedby", "marks-" + node.id);
    else button.removeAttribute("aria-describedby");
    button.className = "graph-node kind-" + node.role + " status-" + (status || "none") + (marks.length ? " marked" : "");
    button.textContent = "";
    button.appendChild(el("span", { class: "kind", text: node.role }));
    button.appendChild(el("span", { class: "name", text: node.name }));
    if (status) button.appendChild(statusBadge(status));
    if (marks.length) button.appendChild(el("span", { class: "mark", id: "marks-" + node.id, text: "⚠ " + marks.join(", ") }));
  }
  function mark(runEvent) {
    var graph = state.graph;
    if (!graph) return;
    var label = runEvent.type === "loop-warning" ? "loop warning" : runEvent.type === "loop-block" ? "loop block" : "guard refusal";
    var list = graph.marks.get(runEvent.toolCallId) || [];
    list.push(label);
    graph.marks.set(runEvent.toolCallId, list);
    graph.nodes.forEach(function (node) {
      if (node.element && node.role === "llm") updateNodeElement(node);
    });
  }
  function onNodeEvent(runEvent) {
    var graph = state.graph;
    if (!graph) return;
    var known = graph.nodes.get(runEvent.nodeId);
    if (known) {
      if (runEvent.status) {
        known.metadata = Object.assign({}, known.metadata, { status: runEvent.status });
        updateNodeElement(known);
      }
    } else if (runEvent.phase === "start") {
      addNode({ id: runEvent.nodeId, role: runEvent.role, name: runEvent.name, caller: null, metadata: { status: "running" }, pending: true });
    }
    if (!graph.more) loadNodes();
  }

  // ---- node detail ------------------------------------------------------------------------------
  function showNode(id) {
    var graph = state.graph;
    var node = graph && graph.nodes.get(id);
    if (!node) return;
    var section = $("node");
    section.hidden = false;
    var body = $("node-body");
    body.textContent = "";
    var meta = node.metadata || {};
    var rows = [
      ["Kind", node.role],
      ["Name", node.name],
      ["Status", meta.status || "—"],
      ["Duration", meta.durationMs !== undefined ? duration(meta.durationMs) : "—"],
    ];
    if (meta.usage) rows.push(["Usage", meta.usage.inputTokens + " in / " + meta.usage.outputTokens + " out tokens"]);
    if (meta.costUsd !== undefined) rows.push(["Cost", cost(meta.costUsd)]);
    var marks = marksOf(node);
    if (marks.length) rows.push(["Marks", marks.join(", ")]);
    body.appendChild(
      el(
        "dl",
        { class: "facts" },
        rows.reduce(function (all, row) {
          return all.concat([el("dt", { text: row[0] }), el("dd", { text: String(row[1]) })]);
        }, []),
      ),
    );
    if (node.role === "llm") {
      var input = node.input || {};
      if (typeof input.history === "number") {
        // Recorded as sent: the system prompt, how much history came before, the user turn as the model got it.
        body.appendChild(el("h3", { text: "Request as sent" }));
        if (input.system) body.appendChild(el("details", { class: "system" }, [el("summary", { text: "System prompt" }), el("pre", { text: input.system })]));
        body.appendChild(el("p", { class: "history", text: input.history === 0 ? "No earlier messages." : input.history + " earlier messages (the nodes above this one)." }));
        body.appendChild(el("p", { class: "block-kind", text: "User turn" }));
        body.appendChild(blocksView(input.sent || input.content));
      } else {
        body.appendChild(el("h3", { text: "Request (user turn)" }));
        if (node.guidance) {
          body.appendChild(
            el("div", { class: "guidance" }, [
              el("p", { class: "block-kind", text: "Situational guidance (first in the user turn; worded again from the enclosing call, the store keeps the turn's new content below)" }),
              el("mark", {}, [el("pre", { text: node.guidance })]),
            ]),
          );
        }
        body.appendChild(blocksView(input.content || node.input));
      }
      body.appendChild(el("h3", { text: meta.error ? "Error" : "Response" }));
      body.appendChild(meta.error ? el("pre", { class: "error", text: json(meta.error) }) : blocksView((node.output && node.output.content) || node.output));
    } else {
      body.appendChild(el("h3", { text: "Input" }));
      body.appendChild(el("pre", { text: json(node.input) }));
      body.appendChild(el("h3", { text: meta.error ? "Error" : "Output" }));
      body.appendChild(el("pre", { class: meta.error ? "error" : "", text: json(meta.error || node.output) }));
    }
    $("node-title").focus();
  }
  function blocksView(blocks) {
    if (!Array.isArray(blocks)) return el("pre", { text: json(blocks) });
    return el(
      "ol",
      { class: "blocks" },
      blocks.map(function (block) {
        if (block.type === "text" && /^You are running INSIDE the function/.test(block.text)) {
          return el("li", { class: "guidance" }, [el("p", { class: "block-kind", text: "Situational guidance" }), el("mark", {}, [el("pre", { text: block.text })])]);
        }
        if (block.type === "text") return el("li", {}, [el("p", { class: "block-kind", text: "text" }), el("pre", { text: block.text })]);
        if (block.type === "tool_use") return el("li", {}, [el("p", { class: "block-kind", text: "tool call " + block.name }), el("pre", { text: json(block.input) })]);
        if (block.type === "tool_result") return el("li", { class: block.isError ? "error" : "" }, [el("p", { class: "block-kind", text: "tool result" + (block.isError ? " (error)" : "") }), el("pre", { text: typeof block.content === "string" ? block.content : json(block.content) })]);
        return el("li", {}, [el("pre", { text: json(block) })]);
      }),
    );
  }

  // ---- the runs feed ----------------------------------------------------------------------------
  function onFeed(name, message) {
    if (name === "snapshot") {
      state.runs = new Map();
      message.runs.forEach(function (run) {
        state.runs.set(run.runId, run);
      });
      renderRuns();
      renderSelectedRun();
    } else if (name === "run") {
      var before = state.runs.get(message.run.runId);
      state.runs.set(message.run.runId, message.run);
      renderRuns();
      renderSelectedRun();
      if (before && before.status === "running" && message.run.status !== "running") {
        loadStored();
        // The run's last nodes are committed before it answers: read them now.
        var selected = state.selected;
        if (selected && selected.kind === "run" && selected.runId === message.run.runId && state.graph && !state.graph.more) loadNodes();
      }
    } else if (name === "run-event") {
      var selected = state.selected;
      if (!selected || selected.kind !== "run" || selected.runId !== message.runId) return;
      var runEvent = message.event;
      if (runEvent.type === "node") onNodeEvent(runEvent);
      else if (runEvent.type === "loop-warning" || runEvent.type === "loop-block" || runEvent.type === "guard-refusal") mark(runEvent);
    }
  }
  function connectFeed() {
    if (state.feed) state.feed.abort();
    var controller = new AbortController();
    state.feed = controller;
    fetch("/v1/runs/events", { headers: headers({ accept: "text/event-stream" }), signal: controller.signal })
      .then(function (response) {
        if (response.status === 401) {
          askToken();
          return;
        }
        if (!response.ok || !response.body) throw new Error("HTTP " + response.status);
        $("connection").textContent = "live";
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
        $("connection").textContent = "reconnecting…";
        setTimeout(connectFeed, 2000);
      });
  }

  // ---- start ------------------------------------------------------------------------------------
  function start() {
    api("/inspector/api/config").then(
      function (config) {
        $("token-form").hidden = true;
        state.readOnly = config.readOnly;
        $("mode").textContent = (config.readOnly ? "Read-only · " : "") + config.store;
        document.body.classList.toggle("read-only", config.readOnly);
        loadStored();
        if (config.live === false) $("connection").textContent = "read-only: runs recorded in the store";
        else connectFeed();
      },
      function (error) {
        if (!/valid API key/.test(error.message)) notice(error.message);
      },
    );
  }
  $("token-form").addEventListener("submit", function (event) {
    event.preventDefault();
    state.token = $("token").value.trim();
    sessionStorage.setItem("rein.inspector.token", state.token);
    start();
  });
  $("load-more").addEventListener("click", function () {
    loadNodes();
  });
  $("node-title").setAttribute("tabindex", "-1");
  // The rest of a long graph loads as it scrolls into view.
  if ("IntersectionObserver" in window) {
    new IntersectionObserver(function (entries) {
      if (entries.some(function (entry) { return entry.isIntersecting; }) && state.graph && state.graph.more) loadNodes();
    }).observe($("graph-more"));
  }
  setInterval(tickElapsed, 1000);
  // A link may name a session to open (/inspector?session=<id>): its first page loads beside the config.
  var linked = new URLSearchParams(location.search).get("session");
  if (linked) selectSession(linked);
  start();
})();
