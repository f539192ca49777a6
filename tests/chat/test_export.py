"""Downloading an answer's references: API (`.../messages/{id}/export?format=`) and the button on the chat page."""

from __future__ import annotations

import json

import bibtexparser
import lxml.html
import pytest
import rispy
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from chat.services.conversations import conversation_create, conversation_reply

pytestmark = pytest.mark.django_db

AF_CKD = "Should a patient with atrial fibrillation and stage 4 CKD receive oral anticoagulation?"

USE = "use one of ris, bibtex, nbib, csljson (e.g. ?format=ris)."


@pytest.fixture
def answered(library, user):
    """A conversation answered by the real pipeline (extractive composer): (conversation, answer message)."""
    conversation = conversation_create(user=user)
    answer = conversation_reply(conversation=conversation, text=AF_CKD)
    assert len(answer.references) >= 2
    return conversation, answer


@pytest.fixture
def api(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def export_url(conversation, answer, fmt: str) -> str:
    return f"/api/v1/conversations/{conversation.pk}/messages/{answer.pk}/export?format={fmt}"


def test_ris_export_lists_every_reference_with_its_identifiers(api, answered) -> None:
    conversation, answer = answered
    response = api.get(export_url(conversation, answer, "ris"))
    assert response.status_code == 200
    assert response["Content-Type"] == "application/x-research-info-systems; charset=utf-8"
    assert response["Content-Disposition"] == f'attachment; filename="medcite-answer-{answer.pk}-references.ris"'
    entries = rispy.loads(response.content.decode())
    assert len(entries) == len(answer.references)
    for entry, reference in zip(entries, answer.references, strict=True):
        assert entry["title"] == reference["title"]
        assert entry.get("accession_number", "") == reference.get("pmid", "")
        assert entry.get("doi", "") == reference.get("doi", "")
        assert reference["url"] in entry["urls"]
    assert any(entry.get("doi") for entry in entries)


def test_bibtex_and_csl_json_exports_agree_with_the_references(api, answered) -> None:
    conversation, answer = answered
    library = bibtexparser.parse_string(api.get(export_url(conversation, answer, "bibtex")).content.decode())
    assert not library.failed_blocks
    assert [entry.fields_dict.get("pmid").value if "pmid" in entry else "" for entry in library.entries] == [
        reference.get("pmid", "") for reference in answer.references
    ]
    items = json.loads(api.get(export_url(conversation, answer, "csljson")).content)
    assert [item.get("DOI", "") for item in items] == [reference.get("doi", "") for reference in answer.references]
    nbib = api.get(export_url(conversation, answer, "nbib")).content.decode()
    pmids = [reference["pmid"] for reference in answer.references if reference.get("pmid")]
    assert [line[6:] for line in nbib.splitlines() if line.startswith("PMID- ")] == pmids


def test_an_unknown_format_is_a_400_json_error(api, answered) -> None:
    conversation, answer = answered
    response = api.get(export_url(conversation, answer, "docx"))
    assert response.status_code == 400
    assert response.json()["error"] == {
        "code": "invalid",
        "message": f"format: Unknown export format 'docx'; {USE}",
        "fields": {"format": [f"Unknown export format 'docx'; {USE}"]},
    }


def test_only_your_own_answers_can_be_exported(answered, other_user) -> None:
    conversation, answer = answered
    client = APIClient()
    assert client.get(export_url(conversation, answer, "ris")).status_code in {401, 403}
    client.force_authenticate(other_user)
    response = client.get(export_url(conversation, answer, "ris"))
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
    # A question is not an answer: it has no references to export.
    question = conversation.messages.order_by("id").first()
    client.force_authenticate(conversation.user)
    assert client.get(export_url(conversation, question, "ris")).status_code == 404


def test_the_openapi_schema_documents_the_export_formats(api) -> None:
    schema = api.get("/api/schema/?format=json").json()
    operation = schema["paths"]["/api/v1/conversations/{id}/messages/{message_id}/export"]["get"]
    [fmt] = [parameter for parameter in operation["parameters"] if parameter["name"] == "format"]
    assert fmt["required"] is True and set(fmt["schema"]["enum"]) == {"ris", "bibtex", "nbib", "csljson"}
    assert set(operation["responses"]["200"]["content"]) == {
        "application/x-research-info-systems",
        "application/x-bibtex",
        "application/nbib",
        "application/vnd.citationstyles.csl+json",
    }
    assert "400" in operation["responses"]
    assert "/api/v1/abstracts/export" in schema["paths"]


def test_the_chat_page_has_a_download_button_per_answer(client, user, answered) -> None:
    conversation, answer = answered
    client.force_login(user)
    html = lxml.html.fromstring(client.get(f"/chat/{conversation.pk}/").content.decode())
    [form] = html.cssselect(f"#message-{answer.pk} form.ref-export")
    assert form.get("action") == f"/chat/{conversation.pk}/messages/{answer.pk}/export/"
    assert [option.get("value") for option in form.cssselect("select[name=format] option")] == [
        "ris", "bibtex", "nbib", "csljson"
    ]
    response = client.get(form.get("action"), {"format": "bibtex"})
    assert response.status_code == 200 and response["Content-Disposition"].endswith('.bib"')
    assert len(bibtexparser.parse_string(response.content.decode()).entries) == len(answer.references)
    bad = client.get(form.get("action"), {"format": "pdf"})
    assert bad.status_code == 400
    assert bad.content.decode() == f"Unknown export format 'pdf'; {USE}"


def test_a_reference_stored_as_an_abstract_exports_every_author_and_the_abstract(api, user, shared_data) -> None:
    from chat.models import Message, MessageRole
    from pubmed.models import Abstract
    from pubmed.parsers import parse_pubmed_xml
    from pubmed.services.store import abstracts_upsert

    records = parse_pubmed_xml((shared_data / "eutils" / "biomcp/efetch_pubmed_22663011.xml").read_bytes())
    abstracts_upsert(records=records, embed=False)
    stored = Abstract.objects.get(pmid="22663011")
    assert len(stored.authors) > 3
    conversation = conversation_create(user=user)
    answer = Message.objects.create(
        conversation=conversation,
        role=MessageRole.ASSISTANT,
        content="A stored abstract [1].",
        extras={
            "references": [
                {"pmid": "22663011", "url": "https://pubmed.ncbi.nlm.nih.gov/22663011/", "title": stored.title,
                 "authors": f"{stored.authors[0]} et al.", "journal": stored.journal, "year": stored.year}
            ]
        },
    )
    [entry] = rispy.loads(api.get(export_url(conversation, answer, "ris")).content.decode())
    assert len(entry["authors"]) == len(stored.authors)
    assert entry["abstract"] == " ".join(stored.abstract.split())
    assert "Author list shortened in the source (et al.)." not in entry["notes"]
