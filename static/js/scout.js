/* Evidence Scout run page: follow the run's progress through GET /api/v1/scout/<id>/ and update the
   steps in place; reload once the run has finished so the summary is rendered by the server.
   Without this script the page refreshes itself (<noscript> meta refresh). */
(function () {
  "use strict";
  var list = document.getElementById("scout-steps");
  if (!list || !list.dataset.poll || !window.fetch) { return; }
  var bar = document.getElementById("scout-progress");

  function show(step) {
    var item = list.querySelector('li[data-step="' + step.key + '"]');
    if (!item) { return; }
    item.dataset.status = step.status;
    item.querySelector(".step-status").textContent = step.status;
    item.querySelector(".step-count").textContent = step.count === null ? "" : String(step.count);
    item.querySelector(".step-detail").textContent = step.detail ? "— " + step.detail : "";
    item.querySelector(".step-seconds").textContent = step.seconds === null ? "" : "(" + step.seconds.toFixed(2) + " s)";
  }

  function poll() {
    fetch(list.dataset.poll, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) { return response.ok ? response.json() : Promise.reject(response.status); })
      .then(function (run) {
        run.steps.forEach(show);
        if (bar) { bar.value = run.progress; bar.textContent = String(run.progress); }
        if (run.status === "succeeded" || run.status === "failed") { window.location.reload(); return; }
        window.setTimeout(poll, 1500);
      })
      .catch(function () { window.setTimeout(poll, 5000); });
  }
  window.setTimeout(poll, 1000);
})();
