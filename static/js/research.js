/* MedCite research pages (Tablizer, TrialScout): the chat tray streamed over server-sent events and
   the Yes / No / Unclear filters of AI columns. Accept / Dismiss, AI-column progress and "Load more"
   are htmx attributes in the templates. Every form here also works without JavaScript. */
(function () {
  "use strict";
  var announcer = document.getElementById("tray-status");
  function announce(text) { if (announcer) { announcer.textContent = text; } }

  /* --- The tray: stream a reply into the thread ---------------------------------------------- */
  var trayForm = document.querySelector("form[data-tray-form]");
  var thread = document.getElementById("tray-thread");
  // The thread opens at its newest turn (after a reload, an accepted suggestion or a page without JS).
  var turns = thread ? thread.querySelectorAll(".tray-turn") : [];
  if (turns.length && window.MedCite && window.MedCite.revealTurn) {
    var newest = turns[turns.length - 1];
    if (thread.scrollHeight > thread.clientHeight) { window.MedCite.revealTurn(thread, newest, false); }
  }
  if (trayForm && thread && window.fetch && window.TextDecoder && window.ReadableStream) {
    var textarea = trayForm.querySelector("textarea[name=question]");
    trayForm.addEventListener("submit", function (event) {
      var question = textarea.value.trim();
      if (!question) { return; }
      event.preventDefault();
      var empty = thread.querySelector(".tray-empty");
      if (empty) { empty.remove(); }
      announce("Question sent.");
      window.MedCite.streamTurn({
        form: trayForm,
        thread: thread,
        question: question,
        progressText: "Reading the page…",
        previewTestId: "tray-preview",
        announce: announce,
        endedEarly: "The reply stream ended early. Reload the page: a finished reply is saved.",
        onMeta: function (data) {
          if (!trayForm.querySelector("input[name=conversation]")) {
            var holder = document.createElement("input");
            holder.type = "hidden";
            holder.name = "conversation";
            holder.value = data.conversation_id;
            trayForm.appendChild(holder);
          }
        },
        onDone: function (data) {
          // The reply's suggestion cards arrived as HTML: let htmx wire their Accept / Dismiss forms.
          if (window.htmx) { window.htmx.process(thread); }
          var cards = (data.payloads || []).length;
          announce("Reply ready" + (cards ? ", with " + cards + " suggestion" + (cards > 1 ? "s" : "") : "") + ".");
        }
      });
    });
  }

  /* --- AI columns: filters over the loaded rows ------------------------------------------------ */
  var serverFiltered = document.querySelector("a[data-ai-filter][aria-current][data-ai-filter-value]:not([data-ai-filter-value=''])");
  var filters = {};

  function applyFilters() {
    var rows = document.querySelectorAll("tr[data-item]");
    var shown = 0;
    Array.prototype.forEach.call(rows, function (row) {
      var keep = Object.keys(filters).every(function (columnId) {
        var cell = row.querySelector("[data-ai-cell^='" + columnId + ":']");
        return cell && cell.getAttribute("data-ai-value") === filters[columnId];
      });
      row.hidden = !keep;
      if (keep) { shown += 1; }
    });
    if (Object.keys(filters).length) { announce(shown + " of " + rows.length + " rows shown."); }
  }

  document.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest("a[data-ai-filter]") : null;
    if (!link || serverFiltered) { return; }  // a page filtered by the server reloads to unfilter
    event.preventDefault();
    var columnId = link.getAttribute("data-ai-filter");
    var value = link.getAttribute("data-ai-filter-value");
    if (value) { filters[columnId] = value; } else { delete filters[columnId]; }
    Array.prototype.forEach.call(document.querySelectorAll("a[data-ai-filter='" + columnId + "']"), function (other) {
      if (other === link) { other.setAttribute("aria-current", "true"); } else { other.removeAttribute("aria-current"); }
    });
    applyFilters();
  });
  // Rows added by "Load more" and cells filled by a poll are filtered like the rest.
  document.addEventListener("htmx:afterSettle", function () {
    if (Object.keys(filters).length) { applyFilters(); }
  });
}());
