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

  /* Append the asked question and a pending answer (progress line + streamed preview) to `thread`;
     return {pending, progress, preview}. */
  function appendPendingTurn(thread, question, progressText, previewTestId) {
    var asked = element("article", "chat-turn user");
    asked.appendChild(element("p", "chat-question", question));
    var pending = element("article", "chat-turn assistant pending");
    pending.setAttribute("aria-busy", "true");
    var progress = element("p", "chat-progress muted", progressText);
    var preview = element("div", "chat-answer chat-preview");
    preview.setAttribute("data-testid", previewTestId);
    pending.appendChild(progress);
    pending.appendChild(preview);
    thread.appendChild(asked);
    thread.appendChild(pending);
    return { pending: pending, progress: progress, preview: preview };
  }

  window.MedCite = window.MedCite || {};
  window.MedCite.postEventStream = postEventStream;
  window.MedCite.appendPendingTurn = appendPendingTurn;
})();
