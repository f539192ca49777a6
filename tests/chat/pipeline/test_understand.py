import pytest

from chat.answer_settings import answer_settings
from chat.pipeline.retrieve import tag_weights
from chat.pipeline.state import AnswerRun
from chat.pipeline.understand import question_vocabulary, result_context, tag_names, understand
from evidence.concepts import TOPIC
from evidence.models import Abbreviation, Study, Tag, TagKind
from evidence.text import content_terms, stem
from pubmed.parsers import AbstractRecord
from pubmed.services.store import abstracts_upsert


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


@pytest.mark.django_db
def test_shorthand_no_curated_row_knows_is_read_as_the_stored_abstracts_define_it():
    abstracts_upsert(
        records=[
            AbstractRecord(pmid="201", title="Pain", abstract="Fear-avoidance beliefs in chronic low back pain (LBP)."),
            AbstractRecord(pmid="202", title="Sepsis", abstract="Lipopolysaccharide binding protein (LBP) in sepsis."),
            AbstractRecord(pmid="203", title="Trial", abstract="The Zeta Evaluation Trial (ZETA) of a new drug."),
        ],
        embed=False,
    )
    Study.objects.create(study_name="ZETA", title="Zeta", key_finding="Zeta worked.", disease_tags=["pain"], pmid="203")
    run = AnswerRun(
        question="Chronic LBP: does ZETA or fear-avoidance affect motor performance?", settings=answer_settings()
    )
    step = understand(run)
    # The library study's name is no shorthand; of LBP's two senses, the one sharing "fear-avoidance" wins.
    assert [(d.short, d.long, d.abstracts) for d in run.defined] == [("LBP", "low back pain", 1)]
    assert run.search_text.endswith("(low back pain)")
    lbp = next(concept for concept in run.concepts if concept.label == "LBP")
    assert ("low", "back", "pain") in lbp.forms and lbp.role == TOPIC
    assert "shorthand read as the stored abstracts define it: LBP (low back pain)" in step.detail
    assert step.data["defined_shorthand"] == [{"short": "LBP", "long": "low back pain", "abstracts": 1}]


@pytest.mark.django_db
def test_shorthand_a_curated_row_spells_out_is_not_looked_up():
    Abbreviation.objects.create(term="LBP", expansions=["lumbar back pain"], case_sensitive=False)
    abstracts_upsert(
        records=[AbstractRecord(pmid="204", title="Pain", abstract="Chronic low back pain (LBP) was studied.")],
        embed=False,
    )
    run = AnswerRun(question="Chronic LBP: does exercise help?", settings=answer_settings())
    understand(run)
    assert run.defined == [] and run.search_text.endswith("(lumbar back pain)")
