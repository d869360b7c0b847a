// One node's detail; for an llm node the request as sent (guidance highlighted) and the response.
(function (inspector) {
  "use strict";
  var el = inspector.el;
  var json = inspector.json;

  function showNode(id) {
    var graph = inspector.state.graph;
    var node = graph && graph.nodes.get(id);
    if (!node) return;
    graph.shownNodeId = id;
    if (node.stale) inspector.reloadNode(id);
    var section = inspector.$("node");
    section.hidden = false;
    var body = inspector.$("node-body");
    body.textContent = "";
    var meta = node.metadata || {};
    var rows = [
      ["Kind", node.role],
      ["Name", node.name],
      ["Status", meta.status || "—"],
      ["Duration", meta.durationMs !== undefined ? inspector.duration(meta.durationMs) : "—"],
    ];
    if (meta.usage) rows.push(["Usage", meta.usage.inputTokens + " in / " + meta.usage.outputTokens + " out tokens"]);
    if (meta.costUsd !== undefined) rows.push(["Cost", inspector.cost(meta.costUsd)]);
    var marks = inspector.marksOf(node);
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
    inspector.$("node-title").focus();
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

  Object.assign(inspector, { showNode: showNode });
})(window.reinInspector);
