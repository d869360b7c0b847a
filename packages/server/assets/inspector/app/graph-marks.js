// Loop warnings, loop blocks and guard refusals on the llm node whose tool call they hit: from run events, or
// in a recorded session from the next request's input.
(function (inspector) {
  "use strict";
  var state = inspector.state;
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
        if (asker && asker.element) inspector.updateNodeElement(asker);
      } else if (block.type === "text" && LOOP.test(text)) {
        var own = graph.marks.get(node.id) || [];
        if (own.indexOf("loop warning") < 0) own.push("loop warning");
        graph.marks.set(node.id, own);
      }
    });
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
  function mark(runEvent) {
    var graph = state.graph;
    if (!graph) return;
    var label = runEvent.type === "loop-warning" ? "loop warning" : runEvent.type === "loop-block" ? "loop block" : "guard refusal";
    var list = graph.marks.get(runEvent.toolCallId) || [];
    list.push(label);
    graph.marks.set(runEvent.toolCallId, list);
    graph.nodes.forEach(function (node) {
      if (node.element && node.role === "llm") inspector.updateNodeElement(node);
    });
  }

  Object.assign(inspector, { readGuards: readGuards, marksOf: marksOf, mark: mark });
})(window.reinInspector);
