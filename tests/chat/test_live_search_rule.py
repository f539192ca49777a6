"""The live PubMed search runs only when stored evidence does not suffice, and never queues an answer for long."""

from __future__ import annotations

import pytest

from chat.answer_settings import answer_settings
from chat.pipeline import answer_question
from pubmed.clients import eutils_client
from tests.chat.test_answer_pipeline import store_pubmedqa

pytestmark = pytest.mark.django_db

# Its abstract says "blood pressure", never the vocabulary's "hypertension": tag ranking scores it 0,
# yet the judge finds that it answers the question directly.
PMID = "24019262"


def _steps(result) -> dict[str, dict]:
    found: dict[str, dict] = {}
    for step in result.trace:
        found.setdefault(step["step"], step["data"])
    return found


@pytest.fixture
def stored_question(library, shared_data) -> str:
    return store_pubmedqa(shared_data, {PMID})[PMID]


def test_a_question_stored_abstracts_answer_directly_spends_no_ncbi_request(stored_question, eutils):
    result = answer_question(question=stored_question, settings=answer_settings(live_search_direct_sources=1))

    steps = _steps(result)
    sufficiency = steps["judge"]["sufficiency"]
    assert sufficiency["score"] < 50  # the tag score alone would have searched PubMed
    assert (sufficiency["external_search"], sufficiency["external_search_reason"]) == (
        False, "1 sources directly address the question: stored evidence suffices"
    )
    assert "live_search" not in steps
    assert eutils.log == []  # not one request reached the (fake) NCBI
    assert [reference["pmid"] for reference in result.references] == [PMID]


def test_one_primary_study_is_not_enough_so_pubmed_is_searched(stored_question, eutils, esearch_for):
    eutils.expect_request("/entrez/eutils/esearch.fcgi").respond_with_data(esearch_for([]),
                                                                           content_type="application/json")
    result = answer_question(question=stored_question)

    steps = _steps(result)
    assert steps["judge"]["sufficiency"]["direct_sources"] == 1
    assert steps["live_search"]["ran"] is True
    assert [request.path for request, _ in eutils.log] == ["/entrez/eutils/esearch.fcgi"]
    assert [reference["pmid"] for reference in result.references] == [PMID]


def test_when_other_answers_hold_the_ncbi_budget_the_answer_uses_stored_evidence_at_once(
    stored_question, eutils, settings
):
    # A budget no other test spends (NCBI counts per key), whose slots, all taken below, stay taken for 30 s:
    # the answer reaches its live search with the budget still held, however busy the machine is.
    settings.NCBI_API_KEY = "held-by-other-answers"
    settings.NCBI_RATE_LIMIT_MARGIN_SECONDS = 30
    limiter = eutils_client().limiter
    for _ in range(limiter.limit):
        limiter.acquire()

    result = answer_question(question=stored_question, settings=answer_settings(live_search_wait_seconds=0.2))

    live = _steps(result)["live_search"]
    assert (live["ran"], live["busy"], live["deferred"], live["unavailable"]) == (True, True, False, False)
    step = next(step for step in result.trace if step["step"] == "live_search")
    assert step["detail"].endswith("PubMed's shared request budget was taken by other answers, so stored evidence "
                                   "was used")
    assert eutils.log == []
    assert [reference["pmid"] for reference in result.references] == [PMID]


def test_a_failing_pubmed_keeps_an_answer_waiting_no_longer_than_its_live_search_time(
    stored_question, eutils, settings
):
    # NCBI answers 503 to everything; the client's own policy would retry four times over 7.5 s or more of backoff
    # (a physician waited 8.5 s for an answer on a machine that could not reach PubMed).
    settings.NCBI_MAX_RETRIES = 4
    settings.NCBI_BACKOFF_INITIAL_SECONDS = 0.5
    settings.NCBI_API_KEY = "failing-pubmed"  # a budget of its own
    eutils.expect_request("/entrez/eutils/esearch.fcgi").respond_with_data("Service Unavailable", status=503)

    result = answer_question(question=stored_question, settings=answer_settings(live_search_seconds=1.0))

    live = _steps(result)["live_search"]
    assert (live["ran"], live["found"]) == (True, 0)
    assert live["errors"][0].startswith("esearch ")
    # The first wait (0.5-1.0 s) may fit in the second allowed; no wait after it does.
    assert 1 <= len(eutils.log) <= 2
    assert [reference["pmid"] for reference in result.references] == [PMID]


def test_a_drug_no_library_finding_speaks_to_is_searched_for_and_the_answer_says_so_first(library, eutils, esearch_for):
    # The CAP guideline is the anchor of the antibiotics scenario and its description mentions corticosteroids,
    # but none of its curated findings speaks to them.
    eutils.expect_request("/entrez/eutils/esearch.fcgi").respond_with_data(esearch_for([]),
                                                                           content_type="application/json")
    result = answer_question(question="Should I give steroids for severe community-acquired pneumonia?")

    steps = _steps(result)
    assert steps["judge"]["sufficiency"]["external_search_reason"] == "no admitted source speaks to steroids"
    assert steps["live_search"]["ran"] is True
    assert result.answer.startswith("**Bottom line:** The cited evidence gives no finding on steroids. Nearest")
    assert result.confidence == "YELLOW"
    assert "no shown finding speaks to steroids" in " ".join(result.confidence_reasons)


def test_the_seeded_trial_protocol_is_cited_as_context_never_as_the_answer(library, eutils, esearch_for):
    eutils.expect_request("/entrez/eutils/esearch.fcgi").respond_with_data(esearch_for([]),
                                                                           content_type="application/json")
    # CIRCULATE-Japan (pmid 33931919) is the design of GALAXY, VEGA and ALTAIR: it names this very question
    # (VEGA randomises it) but reports no outcome, so it neither answers nor counts towards GREEN.
    result = answer_question(question="ctDNA-negative high-risk stage II colon cancer — skip adjuvant CAPOX?")

    judged = {j["doc_id"]: j for step in result.trace if step["step"] == "judge" for j in step["data"]["judgements"]}
    assert (judged["pmid:33931919"]["addresses"], judged["pmid:33931919"]["direct"]) == (True, False)
    assert "CIRCULATE-Japan platform protocol" not in result.answer.split("\n\n")[0]

    stage_three = answer_question(question="stage III colon ca ctDNA+ after resection — escalate adjuvant?")
    bottom_line = stage_three.answer.split("\n\n")[0]
    assert "CIRCULATE-Japan platform protocol" not in bottom_line
    assert "stage II colon cancer" not in bottom_line  # DYNAMIC's stage II findings answer for other patients


def test_a_study_stating_the_duration_asked_for_addresses_a_duration_question(library, eutils, esearch_for):
    eutils.expect_request("/entrez/eutils/esearch.fcgi").respond_with_data(esearch_for([]),
                                                                           content_type="application/json")
    first = "IMvigor011, ctDNA+ MIBC after cystectomy - real OS benefit with atezo or just DFS?"
    answered = answer_question(question=first).answer
    history = [{"role": "user", "content": first}, {"role": "assistant", "content": answered}]
    # IMvigor011's finding gives atezolizumab "for up to 1 year": none of the duration tag's wordings ("how long",
    # "duration", "months of"), but the kind of answer the follow-up asks for. It had been set aside as "does not
    # address treatment duration", and the answer abstained.
    result = answer_question(question="dose and for how long?", history=history)

    judged = {j["doc_id"]: j for step in result.trace if step["step"] == "judge" for j in step["data"]["judgements"]}
    assert judged["pmid:41124204"]["addresses"], judged["pmid:41124204"]["reason"]
    assert not result.abstained
    # The finding's sentence that states the dose and the duration comes first, before its survival result.
    first = result.answer.split("\n\n")[0].removeprefix("**Bottom line:** ")
    assert "1680 mg" in first.split(". ")[0] and "up to 1 year" in first.split(". ")[0]
    assert "disease-free survival" in first
