"""The Tablizer as a research page: snapshots, compare mode, the year histogram, the tray and AI columns."""

from __future__ import annotations

from collections.abc import Callable

import lxml.html
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from chat.models import Conversation, Message, MessageRole
from evidence.models import Tag
from pubmed.models import TablizerSnapshot
from pubmed.services.snapshots import compare_pmids
from research.pages import tablizer
from research.registries import page_get
from research.reply import tray_reply
from tests.factories import UserFactory
from tests.research.factories import AIColumnFactory, AIColumnResultFactory

A_PMIDS = ["35123456", "22663011", "28775130"]
B_PMIDS = ["22663011", "31978945", "28775130", "27797938"]


def page(response) -> lxml.html.HtmlElement:
    return lxml.html.fromstring(response.content.decode())


@pytest.fixture
def esearch_by_term(eutils: HTTPServer, esearch_for: Callable[[list[str]], str]) -> Callable[[dict], HTTPServer]:
    """Answer esearch with the recorded JSON listing the PMIDs given for each term."""

    def serve(terms: dict[str, list[str]]) -> HTTPServer:
        def handler(request: Request) -> Response:
            return Response(esearch_for(terms[request.args["term"]]), content_type="application/json")

        eutils.expect_request("/entrez/eutils/esearch.fcgi").respond_with_handler(handler)
        return eutils

    return serve


@pytest.fixture
def logged_in(client, user):
    client.force_login(user)
    return client


@pytest.fixture
def two_snapshots(user, abstracts) -> tuple[TablizerSnapshot, TablizerSnapshot]:
    a = TablizerSnapshot.objects.create(user=user, label="Narrow", query="pten", count=3, pmids=A_PMIDS)
    b = TablizerSnapshot.objects.create(
        user=user, label="Broad", query="pten OR pi3k", year_from=2010, count=40, pmids=B_PMIDS
    )
    return a, b


@pytest.mark.parametrize(
    ("a", "b", "only_a", "only_b", "both"),
    [
        (A_PMIDS, B_PMIDS, ["35123456"], ["31978945", "27797938"], ["22663011", "28775130"]),
        (["1", "2"], ["1", "2"], [], [], ["1", "2"]),
        (["1", "2"], [], ["1", "2"], [], []),
        ([], ["3"], [], ["3"], []),
        (["1", "1", "2"], ["2", "2"], ["1"], [], ["2"]),
    ],
)
def test_compare_splits_two_snapshots_into_only_a_only_b_and_both(a, b, only_a, only_b, both) -> None:
    assert compare_pmids(a=a, b=b) == (only_a, only_b, both)


pmid_lists = st.lists(st.integers(min_value=1, max_value=40).map(str), max_size=30)


@given(a=pmid_lists, b=pmid_lists)
def test_compare_set_arithmetic(a: list[str], b: list[str]) -> None:
    only_a, only_b, both = compare_pmids(a=a, b=b)

    assert set(only_a) == set(a) - set(b)
    assert set(only_b) == set(b) - set(a)
    assert set(both) == set(a) & set(b)
    assert len(only_a) + len(both) == len(set(a))
    assert len(only_b) + len(both) == len(set(b))
    assert only_a == [pmid for pmid in dict.fromkeys(a) if pmid in set(only_a)]
    assert only_b == [pmid for pmid in dict.fromkeys(b) if pmid in set(only_b)]
    assert both == [pmid for pmid in dict.fromkeys(a) if pmid in set(both)]


@pytest.mark.django_db
def test_saving_a_snapshot_keeps_query_count_and_loaded_pmids(logged_in, user, abstracts, esearch_by_term) -> None:
    esearch_by_term({"pten": A_PMIDS})
    state = "q=pten&year_from=2010&n=20&sort=relevance&dir=asc"

    response = logged_in.post("/tablizer/snapshots/", {"label": "  Narrow   search ", "state": state})

    assert response["Location"] == f"/tablizer/?{state}#snapshots"
    snapshot = TablizerSnapshot.objects.get(user=user)
    assert (snapshot.label, snapshot.query, snapshot.year_from, snapshot.year_to, snapshot.count, snapshot.pmids) == (
        "Narrow search",
        "pten",
        2010,
        None,
        3,
        A_PMIDS,
    )
    html = page(logged_in.get(f"/tablizer/?{state}"))
    [item] = html.cssselect("#snapshots li")
    assert " ".join(item.text_content().split()).startswith(
        f"#{snapshot.pk} Narrow search pten (2010 onwards) 3 results, 3 loaded"
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"label": "", "state": "q=pten"}, "Give the snapshot a label, e.g. Before adding the RCT filter."),
        ({"label": "x" * 121, "state": "q=pten"}, "The label is 121 characters long; keep it to 120."),
        (
            {"label": "Before\x00", "state": "q=pten"},
            "The label contains a NUL character (\\x00), which MedCite cannot store or search; remove it.",
        ),
        ({"label": "Nothing", "state": ""}, "Run a search first: a snapshot saves the results of a search."),
    ],
)
def test_a_bad_snapshot_is_a_message_and_saves_nothing(logged_in, abstracts, esearch_by_term, data, message) -> None:
    esearch_by_term({"pten": A_PMIDS})

    response = logged_in.post("/tablizer/snapshots/", data, follow=True)

    assert message in [item.text_content() for item in page(response).cssselect(".messages li")]
    assert TablizerSnapshot.objects.count() == 0


@pytest.mark.django_db
def test_snapshots_belong_to_their_user(client, logged_in, two_snapshots) -> None:
    other = UserFactory(username="someone-else")
    foreign = TablizerSnapshot.objects.create(user=other, label="Theirs", query="x", count=1, pmids=["1"])

    assert logged_in.post(f"/tablizer/snapshots/{foreign.pk}/delete/").status_code == 404
    assert TablizerSnapshot.objects.filter(pk=foreign.pk).exists()
    html = page(logged_in.get(f"/tablizer/?compare_a={foreign.pk}&compare_b={two_snapshots[0].pk}"))
    assert html.cssselect("#compare") == []
    assert "Compare mode needs two of your snapshots; pick them from the list." in html.text_content()
    client.logout()
    assert client.post("/tablizer/snapshots/", {"label": "x"})["Location"].startswith("/accounts/login/")


@pytest.mark.django_db
def test_compare_mode_shows_only_in_a_only_in_b_and_both(logged_in, two_snapshots) -> None:
    a, b = two_snapshots

    html = page(logged_in.get(f"/tablizer/?compare_a={a.pk}&compare_b={b.pk}"))

    assert html.cssselect("#compare-title")[0].text_content() == "Comparing A: Narrow with B: Broad"
    assert (
        html.cssselect("#compare .tablizer-summary")[0]
        .text_content()
        .startswith("1 only in A, 2 only in B, 2 in both.")
    )
    groups = {
        table.get("data-compare-group"): [row.get("data-item") for row in table.cssselect("tbody tr")]
        for table in html.cssselect("table[data-compare-group]")
    }
    assert groups == {"only-a": ["35123456"], "both": ["22663011", "28775130"], "only-b": ["31978945", "27797938"]}
    assert [h.text_content() for h in html.cssselect("#compare h3")] == [
        "Only in A: Narrow (1)",
        "In both (2)",
        "Only in B: Broad (2)",
    ]
    state = html.cssselect("form[data-tray-form] input[name=state]")[0].get("value")
    assert state == f"compare_a={a.pk}&compare_b={b.pk}"


@pytest.mark.django_db
def test_the_tray_sees_snapshots_and_compare_mode(user, two_snapshots) -> None:
    a, b = two_snapshots

    context = tablizer.build_context(state=f"compare_a={a.pk}&compare_b={b.pk}", user=user)

    lines = context.prompt_text().splitlines()
    assert lines[1:9] == [
        "Query: (none)",
        "Date range: any year",
        "Counts: 5 articles in the two snapshots compared.",
        "Snapshots:",
        f'- #{b.pk} "Broad": pten OR pi3k; 2010 onwards; 40 matched, 4 loaded',
        f'- #{a.pk} "Narrow": pten; 3 matched, 3 loaded',
        f'Compare mode: A = #{a.pk} "Narrow", B = #{b.pk} "Broad": 1 only in A, 2 only in B, 2 in both. The rows '
        "below are marked with their group.",
        "AI columns: none",
    ]
    assert context.item_ids == ["35123456", "22663011", "28775130", "31978945", "27797938"]
    assert lines[10].startswith("1. PMID 35123456 | ") and lines[10].endswith(" | only in A")
    assert lines[11].endswith(" | in both")


@pytest.mark.django_db
def test_without_a_model_the_tray_lists_the_rows_of_a_compare_group(user, two_snapshots) -> None:
    a, b = two_snapshots
    conversation = Conversation.objects.create(user=user, app="tablizer")

    message = tray_reply(
        conversation=conversation,
        page=page_get("tablizer"),
        state=f"compare_a={a.pk}&compare_b={b.pk}",
        text="Which articles are only in B?",
        user=user,
    )

    assert message.content.splitlines()[0] == "2 of the 5 loaded articles match only in B:"
    assert [ref["pmid"] for ref in message.extras["references"]] == ["31978945", "27797938"]


@pytest.mark.django_db
def test_the_search_page_shows_a_year_histogram_tray_and_ai_cells(logged_in, user, abstracts, esearch_by_term) -> None:
    esearch_by_term({"pten": [*A_PMIDS, "31978945", "27797938"]})
    column = AIColumnFactory(user=user, page="tablizer", name="RCT")
    AIColumnResultFactory(column=column, item_id="22663011", value="yes", justification="Randomised, double blind.")

    html = page(logged_in.get("/tablizer/?q=pten"))

    svg = html.cssselect("svg.year-histogram")[0]
    bars = {int(rect.get("data-year")): int(rect.get("data-count")) for rect in svg.cssselect("rect.bar")}
    years = [int(row.cssselect("td")[4].text_content()) for row in html.cssselect("#results tbody tr")]
    assert sum(bars.values()) == 5
    assert bars == {year: years.count(year) for year in set(years)}
    assert svg.cssselect("desc")[0].text_content().startswith(f"5 articles from {min(years)} to {max(years)}")
    assert html.cssselect("form[data-tray-form] input[name=state]")[0].get("value") == (
        "q=pten&n=20&sort=relevance&dir=asc"
    )
    cell = html.cssselect("tr[data-item='22663011'] td.ai-cell")[0]
    assert (cell.get("title"), cell.text_content()) == ("Randomised, double blind.", "Yes: Randomised, double blind.")
    assert html.cssselect("#snapshots form input[name=state]")[0].get("value") == "q=pten&n=20&sort=relevance&dir=asc"


@pytest.mark.django_db
def test_accepting_a_rule_built_query_opens_the_tablizer_search(logged_in, user, eutils) -> None:
    Tag.objects.create(
        code="breast",
        kind="disease",
        label="breast cancer",
        synonyms=["breast cancer"],
        mesh_terms=["Breast Neoplasms"],
    )
    logged_in.post("/chat/research/tablizer/ask/", {"question": "find RCTs of metformin in breast cancer"})
    message = Message.objects.get(role=MessageRole.ASSISTANT, conversation__user=user)
    query = message.extras["payloads"][0]["data"]["query"]
    assert query == (
        '("breast cancer"[Title/Abstract] OR "Breast Neoplasms"[MeSH Terms]) AND "metformin"[Title/Abstract] AND '
        '"Randomized Controlled Trial"[Publication Type]'
    )

    response = logged_in.post(
        f"/chat/research/messages/{message.pk}/payloads/p1/accept/", HTTP_ACCEPT="application/json"
    )

    assert response.json()["redirect"] == (
        "/tablizer/?q=%28%22breast+cancer%22%5BTitle%2FAbstract%5D+OR+%22Breast+Neoplasms%22%5BMeSH+Terms%5D%"
        "29+AND+%22metformin%22%5BTitle%2FAbstract%5D+AND+%22Randomized+Controlled+Trial%22%5BPublication+Typ"
        "e%5D"
    )


def test_a_malformed_compare_parameter_is_refused_before_the_search_runs(logged_in, abstracts, esearch_by_term) -> None:
    # The fuzz test found it: a valid query with compare_a "²" answered 400 but had already searched PubMed and
    # cached the esearch result.
    from pubmed.models import EsearchCacheEntry

    server = esearch_by_term({"pten": A_PMIDS})
    response = logged_in.get("/tablizer/", {"q": "pten", "compare_a": "\u00b2"})
    assert response.status_code == 400
    assert "compare_a must be the number of one of your snapshots" in response.content.decode()
    assert not server.log and not EsearchCacheEntry.objects.exists()
