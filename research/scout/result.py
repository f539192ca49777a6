"""The result document of a scout run: the EvidenceSummary fields, the queries run and stage timings.

The same document is stored on the run and shown by the page, the API and `manage.py scout --json`.
"""

from __future__ import annotations

from typing import Any

from research.models import ScoutRun

SUMMARY_FIELDS = ("summary", "study_count", "study_types", "strength", "key_findings", "supporting_pmids")


def result_document(run: ScoutRun, *, llm: str, rate_limit: int) -> dict[str, Any]:
    """Return the result of a run whose stages have all finished (see the module docstring)."""
    state = run.state
    summary = state["synthesize"]["evidence_summary"]
    per_query = state["fetch"]["per_query"]
    return {
        **{name: summary[name] for name in SUMMARY_FIELDS},
        "drug": run.drug,
        "disease": state["normalise"],
        "profile": run.profile,
        "queries": [
            {"axis": q["axis"], "query": q["query"], "pmids_found": per_query.get(q["query"])}
            for q in state["expand"]["queries"]
        ],
        "organ_terms": state["expand"]["organ_terms"],
        "expansion": state["expand"]["source"],
        "pmid_count": len(state["fetch"]["pmids"]),
        "new_abstracts": state["fetch"]["new"],
        "fetch_errors": state["fetch"]["errors"],
        "semantic_query": state["search"]["query"],
        "top20": state["search"]["hits"],
        "reranker": state["rerank"]["method"],
        "reranker_note": state["rerank"]["note"],
        "top5": state["synthesize"]["top"],
        "synthesis": state["synthesize"]["method"],
        "synthesis_note": state["synthesize"]["note"],
        "removed": state["synthesize"]["removed"],
        "llm": llm,
        "ncbi_requests_per_second": rate_limit,
        "timings": {step["key"]: state[step["key"]].get("seconds") for step in run.steps if step["key"] in state},
    }
