// A session's graph as its call tree: read a page at a time, grown on a running run's `node` events.
(function (inspector) {
  "use strict";
  // The first page is a screenful and more (50 rows fill 800 px twice): on screen sooner; later pages are larger.
  var FIRST_PAGE = 50;
  var PAGE = 200;
  var state = inspector.state;
  var $ = inspector.$;
  var el = inspector.el;

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
    graph.loading = inspector
      .api(url)
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
          if (!/no session/.test(error.message)) inspector.notice(error.message);
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
  function addNode(node) {
    var graph = state.graph;
    if (node.role === "llm") inspector.readGuards(node);
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
      inspector.showNode(node.id);
    });
    node.item = el("li", { style: "padding-left:" + Math.min(depth, 12) * 1.1 + "rem" }, [button]);
    $("graph").appendChild(node.item);
  }
  function updateNodeElement(node) {
    var button = node.element;
    var status = (node.metadata && node.metadata.status) || "";
    var marks = inspector.marksOf(node);
    // The accessible name is exactly the mermaid label; warnings are its description.
    button.setAttribute("aria-label", nodeLabel(node));
    if (marks.length) button.setAttribute("aria-describedby", "marks-" + node.id);
    else button.removeAttribute("aria-describedby");
    button.className = "graph-node kind-" + node.role + " status-" + (status || "none") + (marks.length ? " marked" : "");
    button.textContent = "";
    button.appendChild(el("span", { class: "kind", text: node.role }));
    button.appendChild(el("span", { class: "name", text: node.name }));
    if (status) button.appendChild(inspector.statusBadge(status));
    if (marks.length) button.appendChild(el("span", { class: "mark", id: "marks-" + node.id, text: "⚠ " + marks.join(", ") }));
  }
  function onNodeEvent(runEvent) {
    var graph = state.graph;
    if (!graph) return;
    var known = graph.nodes.get(runEvent.nodeId);
    if (known) {
      if (runEvent.status) {
        known.metadata = Object.assign({}, known.metadata, { status: runEvent.status });
        updateNodeElement(known);
        // Its output, duration, usage or error came with its end: read again now, and when it is opened (the
        // end may be committed a moment after its event).
        known.stale = true;
        reloadNode(known.id);
      }
    } else if (runEvent.phase === "start") {
      addNode({ id: runEvent.nodeId, role: runEvent.role, name: runEvent.name, caller: null, metadata: { status: "running" }, pending: true });
    }
    if (!graph.more) loadNodes();
  }

  /** Reads a node that changed since it was read (`stale`) once more; the open detail follows. */
  function reloadNode(id) {
    var graph = state.graph;
    var known = graph && graph.nodes.get(id);
    if (!known || !known.stale || typeof known.seq !== "number") return;
    var url = "/inspector/api/sessions/" + encodeURIComponent(graph.sessionId) + "/nodes?after=" + (known.seq - 1) + "&limit=1";
    inspector.api(url).then(
      function (page) {
        var fresh = page.nodes[0];
        if (state.graph !== graph || !fresh || fresh.id !== id) return;
        // Not committed yet: the version read is older than what the events said.
        if (fresh.metadata && fresh.metadata.status === "running" && known.metadata.status !== "running") return;
        addNode(fresh);
        if (graph.shownNodeId === id && !$("node").hidden) inspector.showNode(id);
      },
      function () {
        // The next page read brings it, or the node stays as shown.
      },
    );
  }

  Object.assign(inspector, { openGraph: openGraph, loadNodes: loadNodes, updateNodeElement: updateNodeElement, onNodeEvent: onNodeEvent, reloadNode: reloadNode });
})(window.reinInspector);
