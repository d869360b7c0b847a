// Rein Inspector: a plain script (no framework, no build step, no CDN) served by @rein/server at /inspector.
// It is the files of assets/inspector/app joined in order (inspector-assets.ts). They share one object,
// window.reinInspector: made here with the state and helpers; each later file adds its functions to it.
(function () {
  "use strict";
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

  window.reinInspector = { state: state, $: $, el: el, headers: headers, api: api, notice: notice, askToken: askToken };
})();
