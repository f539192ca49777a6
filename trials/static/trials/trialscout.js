// TrialScout "Load more": append the next page's rows in place instead of navigating.
// Without JavaScript the link simply opens the next page, so this is an enhancement only.
(function () {
  "use strict";
  var results = document.getElementById("trial-results");
  if (!results || !window.fetch || !window.DOMParser) { return; }

  results.addEventListener("click", function (event) {
    var link = event.target.closest("a[data-load-more]");
    if (!link) { return; }
    event.preventDefault();
    var status = document.getElementById("trial-results-status");
    link.setAttribute("aria-disabled", "true");
    link.textContent = "Loading…";
    fetch(link.href, { headers: { "Accept": "text/html" }, credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) { throw new Error("HTTP " + response.status); }
        return response.text();
      })
      .then(function (html) {
        var next = new DOMParser().parseFromString(html, "text/html");
        var rows = next.querySelectorAll("#trial-results tbody tr");
        var body = results.querySelector("tbody");
        if (!rows.length || !body) { window.location.assign(link.href); return; }
        rows.forEach(function (row) { body.appendChild(document.importNode(row, true)); });
        // The chat tray and AI columns read the page state: it now includes this page of results.
        var token = new URL(link.href, window.location.href).searchParams.get("page_token");
        if (token) {
          document.querySelectorAll("input[data-page-state]").forEach(function (input) {
            input.value += (input.value ? "&" : "") + "more=" + encodeURIComponent(token);
          });
        }
        document.dispatchEvent(new CustomEvent("research:rows-added"));
        var nextLink = next.querySelector("a[data-load-more]");
        var holder = link.parentNode;
        if (nextLink) {
          link.href = nextLink.getAttribute("href");
          link.textContent = "Load more trials";
          link.removeAttribute("aria-disabled");
        } else {
          holder.textContent = "End of results.";
          holder.className = "load-more muted";
        }
        if (status) { status.textContent = rows.length + " more trials loaded, " + body.rows.length + " shown."; }
        body.rows[body.rows.length - rows.length].querySelector("a").focus();
      })
      .catch(function () { window.location.assign(link.href); });
  });
})();
