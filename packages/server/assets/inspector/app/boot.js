// Start: config (or ask for an API key), then the store and the live feed; key form, Load more, lazy loading.
(function (inspector) {
  "use strict";
  var state = inspector.state;
  var $ = inspector.$;

  function start() {
    inspector.api("/inspector/api/config").then(
      function (config) {
        $("token-form").hidden = true;
        state.readOnly = config.readOnly;
        $("mode").textContent = (config.readOnly ? "Read-only · " : "") + config.store;
        document.body.classList.toggle("read-only", config.readOnly);
        inspector.loadStored();
        if (config.live === false) $("connection").textContent = "read-only: runs recorded in the store";
        else inspector.connectFeed();
      },
      function (error) {
        if (!/valid API key/.test(error.message)) inspector.notice(error.message);
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
    inspector.loadNodes();
  });
  $("node-title").setAttribute("tabindex", "-1");
  // The rest of a long graph loads as it scrolls into view.
  if ("IntersectionObserver" in window) {
    new IntersectionObserver(function (entries) {
      if (entries.some(function (entry) { return entry.isIntersecting; }) && state.graph && state.graph.more) inspector.loadNodes();
    }).observe($("graph-more"));
  }
  setInterval(inspector.tickElapsed, 1000);
  // A link may name a session to open (/inspector?session=<id>): its first page loads beside the config.
  var linked = new URLSearchParams(location.search).get("session");
  if (linked) inspector.selectSession(linked);
  start();
})(window.reinInspector);
