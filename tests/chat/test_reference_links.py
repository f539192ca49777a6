"""Chat references: every identifier is a link (PubMed, doi.org, PMC, ClinicalTrials.gov); tags read as names."""

from __future__ import annotations

import lxml.html
import pytest

from chat.models import Message, MessageRole
from chat.services.conversations import conversation_create, conversation_reply

pytestmark = pytest.mark.django_db

REFERENCE = {
    "n": 1,
    "doc_id": "pmid:35657320",
    "pmid": "35657320",
    "doi": "10.1056/NEJMoa2200075",
    "pmcid": "PMC9701133",
    "url": "https://pubmed.ncbi.nlm.nih.gov/35657320/",
    "title": "Circulating Tumor DNA Analysis Guiding Adjuvant Therapy in Stage II Colon Cancer",
    "authors": "Tie J et al.",
    "journal": "N Engl J Med",
    "year": 2022,
    "badges": ["PubMed"],
}
TRIAL = {
    "n": 2,
    "doc_id": "nct:NCT04120701",
    "nct": "NCT04120701",
    "url": "https://clinicaltrials.gov/study/NCT04120701",
    "title": "DYNAMIC-III",
    "authors": "",
    "journal": "",
    "year": None,
    "badges": ["Clinical Trial"],
}


def test_each_identifier_of_a_reference_is_a_direct_link(client, user) -> None:
    conversation = conversation_create(user=user)
    Message.objects.create(conversation=conversation, role=MessageRole.USER, content="ctDNA-guided adjuvant?")
    answer = Message.objects.create(
        conversation=conversation,
        role=MessageRole.ASSISTANT,
        content="ctDNA guidance halved chemotherapy use [1] [2].",
        extras={"references": [REFERENCE, TRIAL], "confidence": "YELLOW"},
    )
    client.force_login(user)
    html = lxml.html.fromstring(client.get(f"/chat/{conversation.pk}/").content.decode())
    first, second = html.cssselect(f"#message-{answer.pk} .chat-references li")
    links = [(a.text_content(), a.get("href")) for a in first.cssselect(".ref-ids a")]
    assert links == [
        ("PMID 35657320", "https://pubmed.ncbi.nlm.nih.gov/35657320/"),
        ("DOI 10.1056/NEJMoa2200075", "https://doi.org/10.1056/NEJMoa2200075"),
        ("PMCID PMC9701133", "https://pmc.ncbi.nlm.nih.gov/articles/PMC9701133/"),
    ]
    assert [(a.text_content(), a.get("href")) for a in second.cssselect(".ref-ids a")] == [
        ("NCT04120701", "https://clinicaltrials.gov/study/NCT04120701")
    ]


def test_the_trace_names_tags_not_codes(library, client, user) -> None:
    conversation = conversation_create(user=user)
    answer = conversation_reply(
        conversation=conversation,
        text="Can adjuvant chemotherapy be withheld in stage II colon cancer when ctDNA is negative after surgery?",
    )
    understand = answer.extras["trace"][0]
    assert understand["data"]["tags"], "the question names tagged conditions"
    client.force_login(user)
    html = lxml.html.fromstring(client.get(f"/chat/{conversation.pk}/").content.decode())
    first = html.cssselect(f"#message-{answer.pk} .chat-trace li")[0]
    assert first.text_content().startswith("Read the question as one about colon cancer")
    trace = first.cssselect(".trace-detail")[0].text_content().removeprefix("Details")
    assert trace.startswith("Understood the question: Disease tags: ")
    codes = [code for code in understand["data"]["tags"] if "_" in code or code.islower()]
    shown = trace.split("; PICO by")[0]
    assert not [code for code in codes if f" {code}," in shown or f" {code} " in shown or shown.endswith(code)]


def test_the_trace_names_the_anchor_scenario_by_its_title(library, user) -> None:
    from evidence.models import AnchorScenario

    conversation = conversation_create(user=user)
    answer = conversation_reply(
        conversation=conversation,
        text="Should a patient with atrial fibrillation and stage 4 CKD receive oral anticoagulation?",
    )
    classify = next(step for step in answer.extras["trace"] if step["step"] == "classify")
    scenario = AnchorScenario.objects.get(key=classify["data"]["anchor_scenario"])
    assert f"; anchor scenario {scenario.title} with " in classify["detail"]
    assert scenario.key not in classify["detail"]
