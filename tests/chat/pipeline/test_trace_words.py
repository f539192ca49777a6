""""How this answer was built" in the reader's words: one plain sentence per step, no scores or thresholds."""

import json
import re

import pytest

from chat.pipeline.trace_words import step_sentence

CONCEPTS = json.dumps(
    [
        {"label": "atrial fibrillation", "role": "condition", "weight": 1.0},
        {"label": "chronic kidney disease", "role": "condition", "weight": 1.0},
        {"label": "anticoagulation", "role": "decision", "weight": 1.0},
    ]
)
JUDGEMENTS = [
    {"doc_id": "pmid:1", "addresses": True, "score": 0.81},
    {"doc_id": "pmid:2", "addresses": True, "score": 0.77},
    {"doc_id": "pmid:3", "addresses": False, "score": 0.43},
]


@pytest.mark.parametrize(
    ("step", "data", "sentence"),
    [
        ("understand", {"concepts": CONCEPTS},
         "Read the question as one about atrial fibrillation and chronic kidney disease, "
         "asking about anticoagulation."),
        ("understand", {"concepts": "[]"},
         "Found no condition or treatment decision the library knows in the question."),
        ("understand", {"concepts": "[]", "defined_shorthand": [
            {"short": "MLSS", "long": "maximal lactate steady state", "abstracts": 2},
            {"short": "LBP", "long": "low back pain", "abstracts": 1}]},
         "Found no condition or treatment decision the library knows in the question. Read MLSS as maximal lactate "
         "steady state and LBP as low back pain, as stored abstracts define them."),
        ("understand", {"concepts": CONCEPTS, "defined_shorthand": [{"short": "LBP", "long": "low back pain"}]},
         "Read the question as one about atrial fibrillation and chronic kidney disease, "
         "asking about anticoagulation. Read LBP as low back pain, as stored abstracts define it."),
        ("judge", {"judgements": JUDGEMENTS},
         "Kept 2 sources that address the question and set 1 aside as not about it."),
        ("live_search", {"ran": True, "unavailable": True, "errors": ["x"]},
         "Could not reach PubMed, so only stored evidence was used."),
        ("generate", {"provider": "anthropic", "composed_by": "extractive"},
         "The language model failed, so the answer quotes the sources' own sentences instead."),
        ("generate", {"provider": "extractive", "composed_by": "extractive", "abstained": True},
         "Wrote no answer: no admitted source addresses the question."),
        ("generate", {"provider": "anthropic", "composed_by": None, "error": {"code": "overloaded"}},
         "The language model failed, and no answer was written without it (fall-back switched off)."),
        ("support", {"claims": [{"supported": True}], "removed": [{"kind": "claim", "verdict": "contradicted"}]},
         "Checked every statement against the source it cites: 1 supported, 1 removed "
         "(1 because the source says otherwise)."),
        ("confidence", {"confidence": "YELLOW", "reasons": ["only one source addresses the decision"]},
         "YELLOW: only one source addresses the decision."),
        # The reason that holds the badge below GREEN may come second: it is never dropped.
        ("confidence", {"confidence": "YELLOW", "reasons": ["3 sources directly address the question",
                                                             "the question asks for a dose, which no source states"]},
         "YELLOW: 3 sources directly address the question; the question asks for a dose, which no source states."),
    ],
)
def test_each_step_reads_as_one_plain_sentence(step, data, sentence):
    said = step_sentence(step, "Label", data)
    assert said == sentence
    assert not re.search(r"\d\.\d\d|[<≥≤]|score|threshold", said)  # no developer detail


def test_a_step_run_again_after_the_live_search_says_so():
    said = step_sentence("judge", "Judged which evidence addresses the question", {"judgements": JUDGEMENTS},
                         again=True)
    assert said == "Judged again after the live search: kept 2 sources that address the question and set 1 aside " \
                   "as not about it."
    assert step_sentence("rank", "Ranked", {"kept": []}) == "No source was left to put in order."


def test_a_step_without_a_sentence_or_with_unreadable_data_shows_its_label():
    assert step_sentence("new_step", "Did something new", {}) == "Did something new."
    assert step_sentence("judge", "Judged the evidence", {"judgements": "not json"}) == "Judged the evidence."
