import pytest

from chat.services.text import content_terms, stem
from chat.services.understanding import build_vocabulary, question_disease_tags, result_context
from evidence.models import Study


def study(tags, title="", key_finding="", name="S"):
    return Study(study_name=name, disease_tags=tags, title=title, key_finding=key_finding, aliases=[])


VOCABULARY = build_vocabulary(
    [
        study(["af", "ckd"], title="Guideline for the management of atrial fibrillation in chronic kidney disease"),
        study(["cap", "sepsis"], title="Adults with community-acquired pneumonia", name="CAP"),
        study(["colon", "stage_ii", "ctdna"], name="DYNAMIC"),
        study(["heart_failure", "hfpef"], title="Heart failure with a preserved ejection fraction", name="EMP"),
    ]
)


@pytest.mark.parametrize(
    ("question", "tags"),
    [
        ("What to do after surgery for a hernia?", []),
        ("Anticoagulation in AF with CKD?", ["af", "ckd"]),
        ("Atrial fibrillation and chronic kidney disease: which drug?", ["af", "ckd"]),
        ("Antibiotics for community-acquired pneumonia with sepsis", ["cap", "sepsis"]),
        ("Is adjuvant therapy needed in stage II colon cancer if ctDNA is negative?", ["colon", "stage_ii", "ctdna"]),
        ("Stage III colon cancer", ["colon"]),
        ("HFpEF treatment options", ["hfpef"]),
        ("Heart failure with preserved ejection fraction", ["heart_failure", "hfpef"]),
        ("A safe afternoon walk", []),
    ],
)
def test_disease_tags_match_whole_words_and_spelled_out_acronyms(question, tags):
    assert question_disease_tags(question=question, vocabulary=VOCABULARY) == tags


def test_acronym_expansions_come_only_from_the_library_texts():
    assert VOCABULARY.forms["af"] == (("af",), ("atrial", stem("fibrillation")))
    assert ("community", stem("acquired"), "pneumonia") in VOCABULARY.forms["cap"]
    assert VOCABULARY.forms["sepsis"] == ((stem("sepsis"),),)


def test_rarer_tags_weigh_more():
    vocabulary = build_vocabulary([study(["ctdna", "colon"]), study(["ctdna", "breast"]), study(["ctdna"])])
    assert vocabulary.weights["colon"] > vocabulary.weights["ctdna"]


@pytest.mark.parametrize(
    ("question", "context"),
    [
        ("ctDNA-negative after resection: skip chemotherapy?", "negative"),
        ("What if MRD is positive after surgery?", "positive"),
        ("Patient has undetectable ctDNA", "negative"),
        ("Compare ctDNA-positive with ctDNA-negative patients", None),
        ("Does ctDNA predict relapse?", None),
    ],
)
def test_result_context_is_read_from_the_question(question, context):
    assert result_context(question=question) == context


def test_content_terms_drop_question_scaffolding_and_keep_short_acronyms():
    assert content_terms("Should patients with AF and CKD receive apixaban?") == ["af", "ckd", "receiv", "apixaban"]
    assert stem("improved") == stem("improve") == "improv"
