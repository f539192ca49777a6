"""The Tablizer as the tray sees it: the PubMed search, the loaded articles, snapshots and compare mode."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.http import QueryDict
from django.urls import reverse

from config.inputs import parse_ascii_int
from evidence.screening import without_instructions
from evidence.sources import ORIGIN_RETRIEVED, EvidenceSource, doc_id_for
from pubmed.clients import EutilsError
from pubmed.forms import TablizerForm
from pubmed.models import TablizerSnapshot
from pubmed.selectors import (
    abstracts_by_pmids,
    filter_abstracts_by_level,
    snapshot_get,
    snapshots_for_user,
    sort_abstracts,
)
from pubmed.services.snapshots import snapshots_compare
from pubmed.services.tablizer import PUBMED_REFUSED_MESSAGE, PUBMED_UNREACHABLE_MESSAGE, tablizer_search
from research import selectors
from research.context import ItemError, ItemRecord, PageContext, PageItem
from research.registries import page_get

PAGE = "tablizer"
CHUNK_ID = "abstract"
ABSTRACT_CHARS = 6000
SNAPSHOTS_IN_PROMPT = 10


def abstract_item(abstract: Any) -> PageItem:
    """Return a stored abstract as a tray row: its prompt line and the citable record."""
    kinds = tuple(abstract.publication_types)
    level = abstract.level
    line = " | ".join(
        [
            f"PMID {abstract.pmid}",
            *(["RETRACTED - not evidence"] if abstract.is_retracted else []),
            without_instructions(abstract.title) or "(no title)",
            str(abstract.year or "n.d."),
            abstract.journal or "journal not listed",
            ", ".join(kinds[:3]) or "publication type not listed",
            f"level: {level.badge}",
        ]
    )
    source = EvidenceSource(
        doc_id=doc_id_for(pmid=abstract.pmid),
        chunk_id=CHUNK_ID,
        origin=ORIGIN_RETRIEVED,
        title=abstract.title,
        text=abstract.abstract or abstract.title,
        pmid=abstract.pmid,
        doi=abstract.doi,
        pmcid=abstract.pmcid,
        authors=tuple(abstract.authors),
        journal=abstract.journal,
        year=abstract.year,
        publication_types=kinds,
        section="abstract",
        retracted=abstract.is_retracted,
        expression_of_concern=abstract.has_expression_of_concern,
        evidence_level=level.level,
        evidence_level_inferred=level.inferred,
    )
    facets = {
        "type": kinds,
        "level": (level.label,),
        "year": (str(abstract.year),) if abstract.year else (),
        "journal": (abstract.journal,) if abstract.journal else (),
        "mesh": tuple(abstract.mesh_terms or ()),
    }
    return PageItem(
        item_id=abstract.pmid,
        title=abstract.title,
        year=abstract.year,
        line=line,
        source=source,
        facets=facets,
        lacks=() if (abstract.abstract or "").strip() else ("abstract",),
    )


def parse_state(state: str) -> dict[str, Any]:
    """Return the cleaned Tablizer form data of a query string ({} when it searches nothing or is invalid)."""
    data = QueryDict(state or "")
    form = TablizerForm(data if any(data.values()) else None)
    if not (form.is_bound and form.is_valid() and form.cleaned_data.get("q")):
        return {}
    return dict(form.cleaned_data)


def compare_ids(state: str) -> tuple[int, int] | None:
    """Return the two snapshot ids of compare mode (`compare_a`, `compare_b`), or None when not comparing."""
    data = QueryDict(state or "")
    first, second = parse_ascii_int(data.get("compare_a", "")), parse_ascii_int(data.get("compare_b", ""))
    if first is not None and second is not None:
        return first, second
    return None


def compared_snapshots(*, user: Any, ids: tuple[int, int] | None) -> tuple[TablizerSnapshot, TablizerSnapshot] | None:
    """Return the user's two snapshots of compare mode, or None unless both ids name one of theirs."""
    if ids is None:
        return None
    first, second = (snapshot_get(user=user, snapshot_id=pk) for pk in ids)
    if first is None or second is None:
        return None
    return first, second


def state_query(data: dict[str, Any], *, compare: tuple[int, int] | None = None) -> str:
    """Return the Tablizer query string of cleaned form data (and compare mode)."""
    keys = ("q", "year_from", "year_to", "n", "sort", "dir")
    pairs = [(key, data[key]) for key in keys if data.get(key) not in (None, "")]
    pairs += [("level", level) for level in data.get("level") or ()]
    if compare:
        pairs += [("compare_a", compare[0]), ("compare_b", compare[1])]
    return urlencode(pairs)


def _date_range(data: dict[str, Any]) -> str:
    start, end = data.get("year_from"), data.get("year_to")
    if start and end:
        return f"{start}-{end}"
    if start:
        return f"{start} onwards"
    if end:
        return f"up to {end}"
    return "any year"


def _snapshot_line(snapshot: Any) -> str:
    extent = f"; {snapshot.date_range}" if snapshot.date_range else ""
    return (
        f'- #{snapshot.pk} "{snapshot.label}": {snapshot.query}{extent}; {snapshot.count} matched, '
        f"{len(snapshot.pmids)} loaded"
    )


def _compare_items(comparison: Any) -> list[PageItem]:
    """Return the rows of compare mode: only in A, in both, only in B, each marked with its group."""
    items = []
    for group, pmids in (
        ("only in A", comparison.only_a),
        ("in both", comparison.both),
        ("only in B", comparison.only_b),
    ):
        for abstract in abstracts_by_pmids(pmids=pmids):
            item = abstract_item(abstract)
            items.append(
                PageItem(
                    item_id=item.item_id,
                    title=item.title,
                    year=item.year,
                    line=f"{item.line} | {group}",
                    source=item.source,
                    facets={**item.facets, "compare": (group,)},
                )
            )
    return items


def build_context(*, state: str, user: Any) -> PageContext:
    """Return the Tablizer page state as the tray sees it (searches are answered from the esearch cache)."""
    page = page_get(PAGE)
    data = parse_state(state)
    ids = compare_ids(state)
    snapshots = compared_snapshots(user=user, ids=ids)
    compare = ids if snapshots else None
    context = PageContext(
        page=page, state=state_query(data, compare=compare), searched=bool(data) or compare is not None
    )
    translation = ""
    if snapshots:
        comparison = snapshots_compare(a=snapshots[0], b=snapshots[1])
        context.items = _compare_items(comparison)
        context.details["comparison"] = comparison
    elif data:
        try:
            result = tablizer_search(
                query=data["q"], year_from=data["year_from"], year_to=data["year_to"], rows=data["n"]
            )
        except ValueError as exc:
            context.error = str(exc)
        except EutilsError:
            context.error = PUBMED_REFUSED_MESSAGE
        else:
            if result.from_local_store:
                context.error = PUBMED_UNREACHABLE_MESSAGE
            context.total = result.count
            translation = result.query_translation
            rows = sort_abstracts(result.rows, sort=data["sort"], descending=data["dir"] == "desc")
            rows = filter_abstracts_by_level(rows, levels=data["level"])
            context.items = [abstract_item(abstract) for abstract in rows]
    saved = list(snapshots_for_user(user=user)[:SNAPSHOTS_IN_PROMPT])
    context.header = [
        f"Query: {data.get('q') or '(none)'}",
        *([f"PubMed searched: {translation}"] if translation else []),
        f"Date range: {_date_range(data)}",
        *([f"Level of evidence filter: {', '.join(data['level'])}"] if data.get("level") else []),
        (
            f"Counts: {context.total if context.total is not None else 0} articles match in PubMed; "
            f"{len(context.items)} loaded on the page."
            if not compare
            else f"Counts: {len(context.items)} articles in the two snapshots compared."
        ),
        "Snapshots:" if saved else "Snapshots: none saved",
        *[_snapshot_line(snapshot) for snapshot in saved],
    ]
    if compare:
        comparison = context.details["comparison"]
        context.header.append(
            f'Compare mode: A = #{comparison.a.pk} "{comparison.a.label}", B = #{comparison.b.pk} '
            f'"{comparison.b.label}": {len(comparison.only_a)} only in A, {len(comparison.only_b)} only in B, '
            f"{len(comparison.both)} in both. The rows below are marked with their group."
        )
    else:
        context.header.append("Compare mode: off")
    context.details["form"] = data
    context.columns = selectors.ai_columns(user=user, page=PAGE)
    context.values = selectors.ai_column_values(columns=context.columns, item_ids=context.item_ids)
    return context


def abstract_text(abstract: Any) -> str:
    """Return a stored abstract as an AI column reads it."""
    body = without_instructions(abstract.abstract) or "(no abstract)"
    if len(body) > ABSTRACT_CHARS:
        body = body[:ABSTRACT_CHARS].rsplit(" ", 1)[0] + " ..."
    lines = [
        f"PMID {abstract.pmid}: {without_instructions(abstract.title) or '(no title)'}",
        f"Journal: {abstract.journal or 'not listed'}; year: {abstract.year or 'n.d.'}",
        f"Publication types: {', '.join(abstract.publication_types) or 'not listed'}",
        f"Level of evidence: {abstract.level.badge}" + ("; RETRACTED, not evidence" if abstract.is_retracted else ""),
    ]
    if abstract.mesh_terms:
        lines.append(f"MeSH terms: {', '.join(abstract.mesh_terms)}")
    lines.append(f"Abstract: {body}")
    return "\n".join(lines)


def load_items(*, item_ids: list[str]) -> dict[str, ItemRecord | ItemError]:
    """Return the stored abstract of each PMID for AI columns; a PMID not stored is an ItemError."""
    found = {abstract.pmid: abstract for abstract in abstracts_by_pmids(pmids=item_ids)}
    return {
        pmid: (
            ItemRecord(pmid, found[pmid].title, abstract_text(found[pmid]))
            if pmid in found
            else ItemError(pmid, f"PMID {pmid} is not in the abstract store; search for it again.")
        )
        for pmid in item_ids
    }


def search_url(data: dict[str, Any]) -> str:
    """Return the Tablizer URL that runs a `pubmed_query_suggestion`."""
    return f"{reverse('research:tablizer')}?{urlencode({'q': data['query']})}"
