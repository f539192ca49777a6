/* MedCite: POST a form and read the server-sent events of the reply (chat page and research trays). */
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

  window.MedCite = window.MedCite || {};
  window.MedCite.postEventStream = postEventStream;
})();
