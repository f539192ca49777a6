import pytest

from chat.pipeline.retrieve import tag_weights
from chat.pipeline.understand import question_vocabulary, result_context, tag_names
from evidence.models import Study, Tag, TagKind
from evidence.text import content_terms, stem


def study(tags, title="", key_finding="", name="S"):
    return Study(study_name=name, disease_tags=tags, title=title, key_finding=key_finding, aliases=[])


def test_rarer_tags_weigh_more():
    weights = tag_weights([study(["ctdna", "colon"]), study(["ctdna", "breast"]), study(["ctdna"])])
    assert weights["colon"] > weights["ctdna"]
    assert weights["colon"] == weights["breast"]


@pytest.mark.django_db
def test_library_tags_missing_from_the_vocabulary_join_it_as_plain_terms():
    Tag.objects.create(code="af", kind=TagKind.DISEASE, label="atrial fibrillation", synonyms=["AF"])
    vocabulary = question_vocabulary([study(["AF", "sglt2_inhibitors"])])
    assert vocabulary.tags_in("Do SGLT2 inhibitors help in AF?", "disease") == ["sglt2_inhibitors", "af"]
    assert vocabulary.terms["sglt2_inhibitors"].label == "sglt2 inhibitors"
    assert vocabulary.terms["af"].label == "atrial fibrillation"


@pytest.mark.django_db
def test_two_tags_with_one_label_are_named_once_in_the_trace():
    for code in ("cap", "community_acquired_pneumonia"):
        Tag.objects.create(code=code, kind=TagKind.DISEASE, label="community-acquired pneumonia")
    Tag.objects.create(code="sepsis", kind=TagKind.DISEASE, label="sepsis")
    vocabulary = question_vocabulary([])
    assert tag_names(["cap", "community_acquired_pneumonia", "sepsis"], vocabulary) == (
        "Community-acquired pneumonia, Sepsis"
    )


@pytest.mark.parametrize(
    ("question", "context"),
    [
        ("ctDNA-negative after resection: skip chemotherapy?", "negative"),
        ("What if MRD is positive after surgery?", "positive"),
        ("Patient has undetectable ctDNA", "negative"),
        ("Compare ctDNA-positive with ctDNA-negative patients", None),
        ("Does ctDNA predict relapse?", None),
        # Shorthand, and a negative written as the absence of a detectable result.
        ("pT3N0 sigmoid ca, ctDNA neg at wk 4 & 7 - observe?", "negative"),
        ("NSCLC adenocarcinoma with no ctDNA detectable pre-op - prognosis?", "negative"),
        ("resected without detectable ctDNA: surveillance?", "negative"),
        ("ctDNA not detectable after surgery", "negative"),
        ("MRD pos at week 4 - escalate?", "positive"),
    ],
)
def test_result_context_is_read_from_the_question(question, context):
    assert result_context(question) == context


def test_content_terms_drop_question_scaffolding_and_keep_short_acronyms():
    assert content_terms("Should patients with AF and CKD receive apixaban?") == ["af", "ckd", "receiv", "apixaban"]
    assert stem("improved") == stem("improve") == "improv"
