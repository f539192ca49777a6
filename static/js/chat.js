/* MedCite chat: stream answers over server-sent events. Without this script the form posts and
   the page reloads with the answer (POST + redirect), so everything still works. */
(function () {
  "use strict";
  var form = document.querySelector("form[data-chat-form]");
  if (!form || !window.fetch || !window.TextDecoder || !window.ReadableStream) { return; }
  var thread = document.getElementById("chat-thread");
  var announcer = document.getElementById("chat-status");
  var textarea = form.querySelector("textarea[name=question]");
  var button = form.querySelector("button[type=submit]");

  function announce(text) { if (announcer) { announcer.textContent = text; } }

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) { node.className = className; }
    if (text) { node.textContent = text; }
    return node;
  }


  function addToSidebar(url, title) {
    var list = document.querySelector(".chat-conversations");
    if (!list) { return; }
    var empty = list.querySelector("li.muted");
    if (empty) { empty.remove(); }
    var item = element("li");
    var link = element("a", "", title.length > 80 ? title.slice(0, 79) + "…" : title);
    link.href = url;
    link.setAttribute("aria-current", "page");
    item.appendChild(link);
    list.insertBefore(item, list.firstChild);
  }

  function showError(pending, message) {
    pending.classList.remove("pending");
    pending.removeAttribute("aria-busy");
    var note = element("p", "chat-notice", message);
    note.setAttribute("role", "alert");
    pending.appendChild(note);
    announce(message);
  }

  // A citation marker jumps to its reference (plain anchor); move keyboard focus there too.
  thread.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest("sup.cite a") : null;
    if (!link) { return; }
    var target = document.getElementById(link.getAttribute("data-ref"));
    if (!target) { return; }
    Array.prototype.forEach.call(document.querySelectorAll(".chat-references li.highlight"), function (item) {
      item.classList.remove("highlight");
    });
    target.classList.add("highlight");
    window.setTimeout(function () { target.focus(); }, 0);
  });

  form.addEventListener("submit", function (event) {
    var question = textarea.value.trim();
    if (!question) { return; }  // let the browser's required-field message show
    event.preventDefault();
    var body = new FormData(form);
    var turn = window.MedCite.appendPendingTurn(thread, question, "Reading the question…", "answer-preview");
    var pending = turn.pending, progress = turn.progress, preview = turn.preview;
    textarea.value = "";
    button.disabled = true;
    announce("Question sent. Searching the evidence.");

    var finished = false;
    function handle(item) {
      if (!item) { return; }
      var data = item.data;
      if (item.name === "meta") {
        if (data.conversation_url && window.location.pathname !== data.conversation_url) {
          window.history.replaceState(null, "", data.conversation_url);
          form.action = data.conversation_url + "messages/";
          addToSidebar(data.conversation_url, question);
        }
      } else if (item.name === "status") {
        progress.textContent = data.message + "…";
      } else if (item.name === "delta") {
        preview.textContent += data.text;
      } else if (item.name === "reset") {
        preview.textContent = "";
      } else if (item.name === "done") {
        finished = true;
        var holder = document.createElement("div");
        holder.innerHTML = data.html;  // server-rendered and sanitised
        var answer = holder.firstElementChild;
        if (answer) { pending.replaceWith(answer); } else { pending.remove(); }
        announce("Answer ready, confidence " + (data.confidence || "unknown") + ".");
      } else if (item.name === "error") {
        finished = true;
        showError(pending, data.message);
      }
    }

    window.MedCite.postEventStream(form.action + "?stream=1", body, body.get("csrfmiddlewaretoken"), handle).then(function () {
      if (!finished) { showError(pending, "The answer stream ended early. Reload the page: a finished answer is saved."); }
    }).catch(function (error) {
      showError(pending, error.message || "The question could not be sent.");
    }).then(function () {
      button.disabled = false;
    });
  });
}());
