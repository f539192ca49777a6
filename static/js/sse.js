/* MedCite: the streamed question-and-answer turn shared by the chat page and the research trays. */
(function () {
  "use strict";

  function parseEvent(block) {
    var name = "message", data = [];
    block.split("\n").forEach(function (line) {
      if (line.indexOf("event:") === 0) { name = line.slice(6).trim(); }
      else if (line.indexOf("data:") === 0) { data.push(line.slice(5).replace(/^ /, "")); }
    });
    if (!data.length) { return null; }
    try { return { name: name, data: JSON.parse(data.join("\n")) }; } catch (error) { return null; }
  }

  /* POST `body` to `url` asking for an event stream; call onEvent({name, data}) for each event.
     Resolves when the stream ends; rejects with the API's error message on a non-2xx answer. */
  function postEventStream(url, body, csrfToken, onEvent) {
    return fetch(url, {
      method: "POST",
      body: body,
      credentials: "same-origin",
      headers: { "Accept": "text/event-stream", "X-CSRFToken": csrfToken || "" }
    }).then(function (response) {
      if (!response.ok || !response.body) {
        return response.json().then(function (payload) {
          throw new Error((payload.error && payload.error.message) || ("The server answered " + response.status + "."));
        }, function () { throw new Error("The server answered " + response.status + "."); });
      }
      var reader = response.body.getReader();
      var decoder = new TextDecoder();
      var buffer = "";
      function pump() {
        return reader.read().then(function (chunk) {
          if (chunk.done) {
            if (buffer.trim()) { onEvent(parseEvent(buffer.trim())); }
            return;
          }
          buffer += decoder.decode(chunk.value, { stream: true }).replace(/\r\n/g, "\n");
          var blocks = buffer.split("\n\n");
          buffer = blocks.pop();
          blocks.forEach(function (block) { if (block.trim()) { onEvent(parseEvent(block.trim())); } });
          return pump();
        });
      }
      return pump();
    });
  }

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) { node.className = className; }
    if (text) { node.textContent = text; }
    return node;
  }

  /* Scroll `thread` so that `turn` starts at the top of what it shows: the thread itself when it is a
     scroll box (the trays), else the page. With `focus`, move keyboard focus to the reply (its labelled
     answer article) without a second jump, so focus never falls back to the page body. */
  function revealTurn(thread, turn, focus) {
    if (thread.scrollHeight > thread.clientHeight) {
      thread.scrollTop += turn.getBoundingClientRect().top - thread.getBoundingClientRect().top;
    } else {
      turn.scrollIntoView({ block: "start" });
    }
    if (!focus) { return; }
    var target = turn.matches("article") ? turn : (turn.querySelector("article.chat-turn.assistant") || turn);
    if (!target.hasAttribute("tabindex")) { target.setAttribute("tabindex", "-1"); }
    target.focus({ preventScroll: true });
  }

  /* Stream one question-and-answer turn into `options.thread`: the asked question, then a pending
     answer that shows progress and the screened preview until the server's rendered answer replaces it.
     options: form, thread, question, progressText, previewTestId, announce(text), endedEarly (message),
     onMeta(data) and onDone(data) for what differs between the chat page and the trays. */
  function streamTurn(options) {
    var form = options.form;
    var button = form.querySelector("button[type=submit]");
    var asked = element("article", "chat-turn user");
    asked.appendChild(element("p", "chat-question", options.question));
    var pending = element("article", "chat-turn assistant pending");
    pending.setAttribute("aria-busy", "true");
    var progress = element("p", "chat-progress muted", options.progressText);
    var preview = element("div", "chat-answer chat-preview");
    preview.setAttribute("data-testid", options.previewTestId);
    // Complete lines arrive rendered by the server's answer renderer (lists as lists); the line
    // still being written is shown as text until it is complete.
    var previewLines = element("div", "chat-preview-lines");
    var previewTail = element("p", "chat-preview-tail");
    preview.appendChild(previewLines);
    preview.appendChild(previewTail);
    pending.appendChild(progress);
    pending.appendChild(preview);
    options.thread.appendChild(asked);
    options.thread.appendChild(pending);
    pending.scrollIntoView({ block: "nearest" });
    var body = new FormData(form);
    var textarea = form.querySelector("textarea[name=question]");
    textarea.value = "";
    button.disabled = true;  // a focused button that is disabled drops focus to the body: put it back below
    var finished = false;
    var returnFocus = false;

    function fail(message) {
      finished = true;
      pending.classList.remove("pending");
      pending.removeAttribute("aria-busy");
      var note = element("p", "chat-notice", message);
      note.setAttribute("role", "alert");
      pending.appendChild(note);
      options.announce(message);
      revealTurn(options.thread, pending, false);
      returnFocus = true;  // to the question box once the form is enabled again, to ask again
    }

    function handle(item) {
      if (!item) { return; }
      var data = item.data;
      if (item.name === "meta") {
        options.onMeta(data);
      } else if (item.name === "status") {
        progress.textContent = data.message + "…";
      } else if (item.name === "delta") {
        // Completed paragraphs, rendered and sanitised by the server, are appended once each.
        if (typeof data.html === "string") { previewLines.insertAdjacentHTML("beforeend", data.html); }
        previewTail.textContent = data.tail;
      } else if (item.name === "reset") {
        previewLines.innerHTML = "";
        previewTail.textContent = "";
      } else if (item.name === "done") {
        finished = true;
        var holder = document.createElement("div");
        holder.innerHTML = data.html;  // rendered and sanitised by the server
        var answer = holder.firstElementChild;
        if (answer) { pending.replaceWith(answer); } else { pending.remove(); }
        options.onDone(data);
        if (answer) { revealTurn(options.thread, answer, true); } else { returnFocus = true; }
      } else if (item.name === "error") {
        fail(data.message);
      }
    }

    var csrf = form.querySelector("input[name=csrfmiddlewaretoken]");
    return postEventStream(form.action + "?stream=1", body, csrf ? csrf.value : "", handle).then(function () {
      if (!finished) { fail(options.endedEarly); }
    }).catch(function (error) {
      fail(error.message || "The question could not be sent.");
    }).then(function () {
      button.disabled = false;
      var lost = !document.activeElement || document.activeElement === document.body;
      if (returnFocus || lost) { textarea.focus({ preventScroll: true }); }
    });
  }

  window.MedCite = window.MedCite || {};
  window.MedCite.streamTurn = streamTurn;
  window.MedCite.revealTurn = revealTurn;
})();
