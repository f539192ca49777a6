"""Chat pages: login, ownership, asking without JavaScript, streaming (WSGI and ASGI), rendering."""

import json
import re

import pytest
from asgiref.sync import async_to_sync
from django.test import AsyncClient

from chat.models import Conversation, Message, MessageRole
from chat.rendering import render_answer_html
from tests.chat.factories import ConversationFactory, MessageFactory

pytestmark = pytest.mark.django_db
QUESTION = "Does empagliflozin reduce heart failure hospitalisation in HFpEF?"


def parse_sse(body: str) -> list[tuple[str, dict]]:
    parsed = []
    for block in body.split("\n\n"):
        lines = [line for line in block.splitlines() if line and not line.startswith(":")]
        if not lines:
            continue
        name = next(line[7:] for line in lines if line.startswith("event: "))
        data = json.loads("".join(line[6:] for line in lines if line.startswith("data: ")))
        parsed.append((name, data))
    return parsed


def test_root_redirects_to_chat(client):
    response = client.get("/")
    assert (response.status_code, response["Location"]) == (302, "/chat/")


@pytest.mark.parametrize("url", ["/chat/", "/chat/1/"])
def test_pages_require_login(client, url):
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next={url}"


def test_index_lists_only_my_conversations(client, user, other_user, django_assert_max_num_queries):
    mine = ConversationFactory.create_batch(3, user=user)
    ConversationFactory(user=other_user, title="Someone else's question")
    client.force_login(user)
    with django_assert_max_num_queries(4):
        response = client.get("/chat/")
    assert response.status_code == 200
    assert [conversation.pk for conversation in response.context["conversations"]] == [c.pk for c in reversed(mine)]
    assert "Someone else&#x27;s question" not in response.content.decode()
    assert 'action="/chat/new/"' in response.content.decode()


def test_another_users_conversation_is_a_404(client, user, other_user):
    theirs = ConversationFactory(user=other_user)
    client.force_login(user)
    assert client.get(f"/chat/{theirs.pk}/").status_code == 404
    assert client.post(f"/chat/{theirs.pk}/messages/", {"question": QUESTION}).status_code == 404
    assert not theirs.messages.exists()


def test_asking_without_javascript_posts_and_redirects_to_the_answer(client, user, library):
    client.force_login(user)
    response = client.post("/chat/new/", {"question": QUESTION})
    conversation = Conversation.objects.get(user=user)
    answer = conversation.messages.get(role=MessageRole.ASSISTANT)
    assert response.status_code == 302
    assert response["Location"] == f"/chat/{conversation.pk}/#message-{answer.pk}"
    page = client.get(f"/chat/{conversation.pk}/").content.decode()
    assert f'id="message-{answer.pk}"' in page
    assert "Confidence: GREEN" in page
    # The marker links to its reference and shows, on hover, the source sentence that supports it.
    marker = re.search(
        rf'<sup class="cite"><a href="#ref-{answer.pk}-1" data-ref="ref-{answer.pk}-1" title="([^"]+)" ', page
    )
    assert marker and marker.group(1).startswith("Source says: ")
    assert "Why GREEN: " in page
    assert f'<li id="ref-{answer.pk}-1" value="1" tabindex="-1">' in page
    assert (
        'href="https://pubmed.ncbi.nlm.nih.gov/34449189/" target="_blank" rel="noopener noreferrer">'
        "Empagliflozin in Heart Failure" in page
    )
    assert "Anker SD et al." in page and "<em>N Engl J Med</em> 2021" in page
    assert '<span class="badge">Curated library</span>' in page
    assert "<summary>How this answer was built</summary>" in page
    # Each step in one plain sentence; the developer's line (scores, thresholds) folded under "Details".
    trace = page[page.index("<summary>How this answer was built</summary>"):]
    steps = re.findall(r"<li>([^<]+?) <details class=\"trace-detail\"><summary>Details</summary>", trace)
    assert steps[0].startswith("Read the question as one about heart failure")
    assert any(step.startswith("Checked every statement against the source it cites") for step in steps)
    assert not any(re.search(r"[<≥≤]|\d\.\d\d", step) for step in steps)


def test_follow_up_question_is_added_to_the_conversation(client, user, library):
    conversation = ConversationFactory(user=user)
    client.force_login(user)
    response = client.post(f"/chat/{conversation.pk}/messages/", {"question": QUESTION})
    assert response.status_code == 302
    assert list(conversation.messages.values_list("role", flat=True)) == [MessageRole.USER, MessageRole.ASSISTANT]


def test_empty_question_is_refused_with_the_form_error_and_nothing_stored(client, user):
    client.force_login(user)
    response = client.post("/chat/new/", {"question": "  "})
    assert response.status_code == 400
    assert (
        '<p class="error" id="question-error" role="alert">Type a question first: the question is empty.</p>'
        in response.content.decode()
    )
    assert Conversation.objects.count() == 0
    streamed = client.post("/chat/new/?stream=1", {"question": ""})
    assert (streamed.status_code, streamed.json()) == (
        400,
        {"error": {"code": "blank", "message": "Type a question first: the question is empty."}},
    )


def test_answer_streams_as_server_sent_events(client, user, library):
    conversation = ConversationFactory(user=user)
    client.force_login(user)
    response = client.post(f"/chat/{conversation.pk}/messages/?stream=1", {"question": QUESTION})
    assert response.status_code == 200
    assert response["Content-Type"] == "text/event-stream"
    assert response["Cache-Control"] == "no-cache"
    assert response.streaming
    events = parse_sse(b"".join(response.streaming_content).decode())
    names = [name for name, _ in events]
    assert names[0] == "meta" and names[-1] == "done"
    assert names.count("status") == 3 and "delta" in names
    question = conversation.messages.get(role=MessageRole.USER)
    answer = conversation.messages.get(role=MessageRole.ASSISTANT)
    assert events[0][1] == {
        "conversation_id": conversation.pk,
        "conversation_url": f"/chat/{conversation.pk}/",
        "question_message_id": question.pk,
    }
    done = events[-1][1]
    assert (done["message_id"], done["confidence"]) == (answer.pk, "GREEN")
    assert done["html"].lstrip().startswith(f'<article class="chat-turn assistant" id="message-{answer.pk}"')
    assert "[citation:" not in "".join(data["text"] for name, data in events if name == "delta")


def test_answer_streams_under_asgi_too(user, library):
    conversation = ConversationFactory(user=user)

    async def ask():
        client = AsyncClient()
        await client.aforce_login(user)
        response = await client.post(f"/chat/{conversation.pk}/messages/?stream=1", {"question": QUESTION})
        chunks = [chunk async for chunk in response.streaming_content]
        return response, chunks

    response, chunks = async_to_sync(ask)()
    assert response["Content-Type"] == "text/event-stream"
    assert len(chunks) > 5  # event by event, not one buffered body
    events = parse_sse(b"".join(chunks).decode())
    assert [name for name, _ in events][-1] == "done"
    assert Message.objects.filter(conversation=conversation, role=MessageRole.ASSISTANT).count() == 1


def test_conversation_page_renders_all_messages_with_few_queries(client, user, django_assert_max_num_queries):
    conversation = ConversationFactory(user=user)
    for index in range(5):
        MessageFactory(conversation=conversation, role=MessageRole.USER, content=f"Question {index}")
    client.force_login(user)
    with django_assert_max_num_queries(6):
        response = client.get(f"/chat/{conversation.pk}/")
    assert response.content.decode().count('class="chat-turn user"') == 5


def test_markdown_is_rendered_and_sanitised():
    html = render_answer_html(
        "## Summary\n\n**Bold** claim [1]. <script>alert(1)</script> [Click](https://evil.example) "
        "![x](https://evil.example/x.png) [9]",
        message_id=7,
        reference_count=1,
    )
    assert html.startswith('<h3>Summary</h3>\n<p><strong>Bold</strong> claim <sup class="cite"><a href="#ref-7-1"')
    assert "<script" not in html and "evil.example" not in html and "<img" not in html
    assert "Click" in html
    assert "[9]" in html and 'href="#ref-7-9"' not in html


def test_log_events_of_a_streamed_answer_carry_the_request_id(client, user, library, caplog):
    import logging

    caplog.set_level(logging.INFO)
    conversation = ConversationFactory(user=user)
    client.force_login(user)
    response = client.post(
        f"/chat/{conversation.pk}/messages/?stream=1", {"question": QUESTION}, HTTP_X_REQUEST_ID="req-stream-42"
    )
    b"".join(response.streaming_content)
    complete = [
        record.msg
        for record in caplog.records
        if isinstance(record.msg, dict) and record.msg.get("event") == "answer_complete"
    ]
    assert complete[0]["request_id"] == "req-stream-42"


def test_closing_the_asynchronous_stream_closes_the_synchronous_reply():
    from chat.streaming import _asynchronous

    closed = []

    def reply():
        try:
            yield b"one"
            yield b"two"
        finally:
            closed.append(True)

    async def read_one_then_leave():
        stream = _asynchronous(reply())
        first = await stream.__anext__()
        await stream.aclose()
        return first

    assert async_to_sync(read_one_then_leave)() == b"one"
    assert closed == [True]


def test_a_stream_closed_by_the_server_still_stores_the_answer(user, library):
    from chat.services.conversations import conversation_reply_events
    from chat.streaming import _logged, reply_stream

    conversation = ConversationFactory(user=user)
    events = conversation_reply_events(conversation=conversation, text=QUESTION)
    chunks = _logged(reply_stream(events, meta=lambda event: {}, done=lambda event: {}), {"request_id": "r1"})
    assert next(chunks) == b": stream open\n\n"
    assert next(chunks).startswith(b"event: meta\n")
    chunks.close()  # what the server does when the browser goes away
    assert list(conversation.messages.values_list("role", flat=True)) == [MessageRole.USER, MessageRole.ASSISTANT]


def test_an_abstention_offers_a_tablizer_search_and_lists_removed_statements(client, user):
    conversation = ConversationFactory(user=user)
    MessageFactory(
        conversation=conversation,
        role=MessageRole.ASSISTANT,
        content="Neither the curated library nor the stored PubMed abstracts address metformin closely enough.",
        extras={
            "confidence": "RED",
            "confidence_reasons": ["the answer abstains: no admitted evidence addresses the question"],
            "abstained": True,
            "abstention": {"reason": "nothing_stored", "message": "", "tablizer_query": "metformin eGFR 35"},
            "claims_removed": [{"kind": "claim", "text": "Metformin is safe.", "reason": "no citation"}],
        },
    )
    client.force_login(user)
    page = client.get(f"/chat/{conversation.pk}/").content.decode()
    assert 'href="/tablizer/?q=metformin%20eGFR%2035"' in page
    assert "Why RED: the answer abstains: no admitted evidence addresses the question." in page
    assert "1 statement removed as unsupported" in page and "<q>Metformin is safe.</q>: no citation" in page


def test_an_unreachable_pubmed_is_told_plainly_on_the_answer_page(client, user, library):
    # The autouse fixture points E-utilities at a closed port on 127.0.0.1: every live search is refused.
    client.force_login(user)
    question = "What is the best topical treatment for plantar warts in children?"
    response = client.post("/chat/new/", {"question": question})
    assert response.status_code == 302
    page = client.get(response["Location"].split("#")[0]).content.decode()
    assert "the live PubMed search could not run (PubMed could not be reached)" in page
    assert "PubMed could not be reached, so only stored evidence was used" in page  # in "How this answer was built"
    for raw in ("Errno", "Connection refused", "ConnectError", "E-utilities", "esearch"):
        assert raw not in page, raw


def test_a_stream_that_breaks_tells_the_reader_plainly_and_logs_the_detail(caplog):
    from chat.streaming import reply_stream

    def events():
        raise RuntimeError("connection to server at 127.0.0.1 failed: [Errno 111] Connection refused")
        yield  # a generator, as the reply service's is

    body = b"".join(reply_stream(events(), meta=dict, done=dict)).decode()
    assert parse_sse(body) == [
        (
            "error",
            {
                "code": "internal_error",
                "message": "The answer could not be finished because of a problem on our side; your question is "
                "saved. Reload the page to see it, and ask again.",
            },
        )
    ]
    assert "Errno" not in body and "RuntimeError" not in body
    assert any("answer_stream_failed" in str(record.msg) for record in caplog.records)


def test_the_answer_page_draws_a_decision_aid_as_ordered_boxes_each_citing_its_finding(client, user, library):
    client.force_login(user)
    client.post("/chat/new/", {"question": "AF with CKD stage 4, eGFR 22: which anticoagulant and apixaban dose?"})
    page = client.get(f"/chat/{Conversation.objects.get(user=user).pk}/").content.decode()
    diagram = re.search(r'<figure class="decision-aid decision-diagram">(.*?)</figure>', page, re.S)
    assert diagram, "the AF-with-CKD diagram is shown"
    boxes = re.findall(r'<li class="aid-step"><p class="aid-box">([^<]+)</p>', diagram.group(1))
    assert len(boxes) == 5 and boxes[3].startswith("CrCl 15-30 mL/min")
    assert diagram.group(1).count("curated finding, awaiting review") == 5
    assert 'href="https://pubmed.ncbi.nlm.nih.gov/' in diagram.group(1)
    assert "<img" not in diagram.group(1)
