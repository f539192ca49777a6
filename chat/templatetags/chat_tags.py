from __future__ import annotations

from django import template
from django.utils.safestring import SafeString

from chat.models import Message
from chat.rendering import reference_anchor, render_answer_html
from evidence import identifiers
from evidence.export import EXPORT_FORMATS, ExportFormat

register = template.Library()


@register.simple_tag
def answer_html(message: Message) -> SafeString:
    """Render an assistant message's Markdown as sanitised HTML with linked citation markers."""
    quotes: dict[int, str] = {}
    for citation in message.extras.get("citations", []):
        support = citation.get("support") or []
        if support and isinstance(citation.get("n"), int):
            quotes.setdefault(citation["n"], " … ".join(quote["quote"] for quote in support[:2]))
    names: dict[int, tuple[str, str]] = {}
    if message.extras.get("names_rows"):  # a tray's list of loaded rows: each row by its PMID or NCT number
        for reference in message.references:
            links = reference_links(reference)
            if links and isinstance(reference.get("n"), int):
                label, identifier, url = links[0]
                names[reference["n"]] = (identifier if label == "ClinicalTrials.gov" else f"{label} {identifier}", url)
    return render_answer_html(
        message.content, message_id=message.pk, reference_count=len(message.references), quotes=quotes, names=names
    )


@register.simple_tag
def ref_anchor(message: Message, number: int) -> str:
    return reference_anchor(message.pk, number)


@register.filter
def confidence_class(value: str) -> str:
    return {"GREEN": "green", "YELLOW": "yellow", "RED": "red"}.get(str(value), "")


@register.filter
def confidence_text(value: str) -> str:
    """Say what a confidence level means, for the badge's accessible description."""
    return {
        "GREEN": "at least two sources, or a guideline or review, directly address the question and support the answer",
        "YELLOW": "one primary study, or evidence that addresses the question only in part",
        "RED": "no admitted evidence addresses the question",
    }.get(str(value), "")


@register.filter
def full_stop(value: str) -> str:
    """End a fragment with exactly one full stop ("Tie J et al." stays as it is)."""
    value = str(value or "").strip()
    return value if not value or value.endswith((".", "?", "!")) else value + "."


@register.filter
def reference_links(reference: dict) -> list[tuple[str, str, str]]:
    """Return (label, identifier, URL) for each identifier of a reference: PMID, DOI, PMCID, NCT id."""
    links = []
    pmid, doi, pmcid, nct = (str(reference.get(key) or "") for key in ("pmid", "doi", "pmcid", "nct"))
    if pmid and identifiers.is_pmid(pmid):
        links.append(("PMID", pmid, identifiers.pubmed_url(pmid)))
    if doi and identifiers.is_doi(doi):
        links.append(("DOI", doi, identifiers.doi_url(doi)))
    if pmcid and identifiers.PMCID_RE.fullmatch(pmcid):
        links.append(("PMCID", pmcid, identifiers.pmc_url(pmcid)))
    if nct and identifiers.is_nct(nct):
        links.append(("ClinicalTrials.gov", nct, identifiers.ctgov_url(nct)))
    return links


@register.simple_tag
def export_formats() -> list[ExportFormat]:
    """Return the citation file formats an answer's references can be downloaded in."""
    return list(EXPORT_FORMATS.values())
