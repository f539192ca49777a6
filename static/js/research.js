/* MedCite research pages (Tablizer, TrialScout): the chat tray streamed over server-sent events,
   Accept / Dismiss on suggestion cards, live AI-column progress and Yes / No / Unclear filters.
   Every form here also works without this script (post, redirect, reload). */
(function () {
  "use strict";
  if (!window.fetch) { return; }

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) { node.className = className; }
    if (text) { node.textContent = text; }
    return node;
  }

  function csrfToken(form) {
    var input = form.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  // The page state (the page's own query string) as the tray form holds it; "Load more" extends it.
  function pageState() {
    var input = document.querySelector("form[data-tray-form] input[data-page-state]") ||
      document.querySelector("input[data-page-state]");
    return input ? input.value : "";
  }

  var announcer = document.getElementById("tray-status");
  function announce(text) { if (announcer) { announcer.textContent = text; } }


  /* --- The tray: stream a reply into the thread ---------------------------------------------- */
  var trayForm = document.querySelector("form[data-tray-form]");
  var thread = document.getElementById("tray-thread");
  if (trayForm && thread && window.TextDecoder && window.ReadableStream) {
    var textarea = trayForm.querySelector("textarea[name=question]");
    var button = trayForm.querySelector("button[type=submit]");
    trayForm.addEventListener("submit", function (event) {
      var question = textarea.value.trim();
      if (!question) { return; }
      event.preventDefault();
      var body = new FormData(trayForm);
      var empty = thread.querySelector(".tray-empty");
      if (empty) { empty.remove(); }
      var turn = window.MedCite.appendPendingTurn(thread, question, "Reading the page…", "tray-preview");
      var pending = turn.pending, progress = turn.progress, preview = turn.preview;
      pending.scrollIntoView({ block: "nearest" });
      textarea.value = "";
      button.disabled = true;
      announce("Question sent.");
      var finished = false;

      function fail(message) {
        finished = true;
        pending.classList.remove("pending");
        pending.removeAttribute("aria-busy");
        var note = element("p", "chat-notice", message);
        note.setAttribute("role", "alert");
        pending.appendChild(note);
        announce(message);
      }

      function handle(item) {
        if (!item) { return; }
        var data = item.data;
        if (item.name === "meta") {
          if (!trayForm.querySelector("input[name=conversation]")) {
            var holder = element("input");
            holder.type = "hidden";
            holder.name = "conversation";
            holder.value = data.conversation_id;
            trayForm.appendChild(holder);
          }
        } else if (item.name === "status") {
          progress.textContent = data.message + "…";
        } else if (item.name === "delta") {
          preview.textContent += data.text;
        } else if (item.name === "reset") {
          preview.textContent = "";
        } else if (item.name === "done") {
          finished = true;
          var wrapper = document.createElement("div");
          wrapper.innerHTML = data.html;  // rendered and sanitised by the server
          var turn = wrapper.firstElementChild;
          if (turn) { pending.replaceWith(turn); } else { pending.remove(); }
          var cards = (data.payloads || []).length;
          announce("Reply ready" + (cards ? ", with " + cards + " suggestion" + (cards > 1 ? "s" : "") : "") + ".");
        } else if (item.name === "error") {
          fail(data.message);
        }
      }

      body.set("state", pageState());
      window.MedCite.postEventStream(trayForm.action + "?stream=1", body, csrfToken(trayForm), handle).then(function () {
        if (!finished) { fail("The reply stream ended early. Reload the page: a finished reply is saved."); }
      }).catch(function (error) {
        fail(error.message || "The question could not be sent.");
      }).then(function () {
        button.disabled = false;
      });
    });
  }

  /* --- Suggestion cards: Accept / Dismiss ------------------------------------------------------ */
  document.addEventListener("submit", function (event) {
    var form = event.target.closest ? event.target.closest("form[data-payload-form]") : null;
    if (!form) { return; }
    event.preventDefault();
    var card = form.closest("[data-payload-card]");
    var actions = card.querySelector("[data-payload-actions]");
    var buttons = card.querySelectorAll("button");
    Array.prototype.forEach.call(buttons, function (item) { item.disabled = true; });
    var stateInput = form.querySelector("input[name=state]");
    if (stateInput) { stateInput.value = pageState(); }
    fetch(form.action, {
      method: "POST",
      body: new FormData(form),
      credentials: "same-origin",
      headers: { "Accept": "application/json", "X-CSRFToken": csrfToken(form) }
    }).then(function (response) {
      return response.json().then(function (data) { return { ok: response.ok, data: data }; });
    }).then(function (result) {
      var old = card.querySelector(".payload-error");
      if (old) { old.remove(); }
      if (!result.ok) {
        var note = element("p", "payload-error error", (result.data.error && result.data.error.message) || "That did not work.");
        note.setAttribute("role", "alert");
        card.appendChild(note);
        Array.prototype.forEach.call(buttons, function (item) { item.disabled = false; });
        return;
      }
      var state = result.data.payload.state;
      var label = element("p", "payload-state", state === "accepted" ? "Accepted" : "Dismissed");
      label.setAttribute("data-payload-state", "");
      if (actions) { actions.replaceWith(label); }
      card.classList.remove("state-pending");
      card.classList.add("state-" + state);
      announce(state === "accepted" ? "Suggestion accepted." : "Suggestion dismissed.");
      if (state === "accepted" && result.data.redirect) { window.location.assign(result.data.redirect); }
    }).catch(function () { form.submit(); });
  });

  /* --- AI columns: progress bars and filters --------------------------------------------------- */
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
  document.addEventListener("research:rows-added", applyFilters);

  function fillCell(cell, result) {
    cell.setAttribute("data-ai-value", result.value);
    cell.title = result.justification || "";
    cell.className = "ai-cell" + (/^(yes|no|unclear)$/.test(result.value) ? " ai-" + result.value : "");
    cell.textContent = "";
    cell.appendChild(element("span", "ai-value", result.label));
    if (result.justification) { cell.appendChild(element("span", "visually-hidden", ": " + result.justification)); }
  }

  function poll(holder) {
    var url = holder.getAttribute("data-ai-run");
    var bar = holder.querySelector("progress");
    var text = holder.querySelector("[data-ai-progress-text]");
    function tick() {
      fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" } })
        .then(function (response) {
          if (!response.ok) { throw new Error("HTTP " + response.status); }
          return response.json();
        })
        .then(function (run) {
          bar.max = run.total;
          bar.value = run.done;
          Object.keys(run.results).forEach(function (itemId) {
            var cell = document.querySelector("[data-ai-cell='" + run.column_id + ":" + itemId + "']");
            if (cell && cell.getAttribute("data-ai-value") !== run.results[itemId].value) { fillCell(cell, run.results[itemId]); }
          });
          run.errors.forEach(function (error) {
            var cell = document.querySelector("[data-ai-cell='" + run.column_id + ":" + error.item_id + "']");
            if (cell && !cell.getAttribute("data-ai-value")) {
              cell.title = error.message;
              cell.textContent = "";
              cell.appendChild(element("span", "ai-failed", "Failed"));
            }
          });
          var failed = run.failed ? ", " + run.failed + " failed" : "";
          if (run.finished) {
            holder.classList.add("done");
            var label = holder.querySelector("label");
            if (label) { label.textContent = label.textContent.replace(/^Evaluating/, "Evaluated"); }
            text.textContent = "Done: " + run.done + " of " + run.total + " rows" + failed + ".";
            applyFilters();
          } else {
            text.textContent = run.done + " of " + run.total + " rows" + failed;
            window.setTimeout(tick, 500);
          }
        })
        .catch(function () { window.setTimeout(tick, 2000); });
    }
    tick();
  }
  Array.prototype.forEach.call(document.querySelectorAll("[data-ai-run]"), poll);
}());
