/* MedCite chat: stream answers over server-sent events. Without this script the form posts and
   the page reloads with the answer (POST + redirect), so everything still works. */
(function () {
  "use strict";
  var form = document.querySelector("form[data-chat-form]");
  if (!form || !window.fetch || !window.TextDecoder || !window.ReadableStream) { return; }
  var thread = document.getElementById("chat-thread");
  var announcer = document.getElementById("chat-status");
  var textarea = form.querySelector("textarea[name=question]");

  function announce(text) { if (announcer) { announcer.textContent = text; } }

  function addToSidebar(url, title) {
    var list = document.querySelector(".chat-conversations");
    if (!list) { return; }
    var empty = list.querySelector("li.muted");
    if (empty) { empty.remove(); }
    var item = document.createElement("li");
    var link = document.createElement("a");
    link.textContent = title.length > 80 ? title.slice(0, 79) + "…" : title;
    link.href = url;
    link.setAttribute("aria-current", "page");
    item.appendChild(link);
    list.insertBefore(item, list.firstChild);
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
    announce("Question sent. Searching the evidence.");
    window.MedCite.streamTurn({
      form: form,
      thread: thread,
      question: question,
      progressText: "Reading the question…",
      previewTestId: "answer-preview",
      announce: announce,
      endedEarly: "The answer stream ended early. Reload the page: a finished answer is saved.",
      onMeta: function (data) {
        if (data.conversation_url && window.location.pathname !== data.conversation_url) {
          window.history.replaceState(null, "", data.conversation_url);
          form.action = data.conversation_url + "messages/";
          addToSidebar(data.conversation_url, question);
        }
      },
      onDone: function (data) {
        announce("Answer ready, confidence " + (data.confidence || "unknown") + ".");
      }
    });
  });
}());
