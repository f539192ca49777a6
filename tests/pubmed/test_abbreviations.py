"""Shorthand read as the stored literature defines it (`pubmed.abbreviations`, `shorthand_definitions`)."""

import pytest

from pubmed.abbreviations import best_definition, definitions, long_form
from pubmed.models import Abstract
from pubmed.parsers import AbstractRecord
from pubmed.selectors import shorthand_definitions
from pubmed.services.store import abstracts_upsert


@pytest.mark.parametrize(
    ("short", "before", "expected"),
    [
        ("LBP", "Patients with chronic low back pain", "low back pain"),
        ("ADMA", "Plasma asymmetric dimethylarginine", "asymmetric dimethylarginine"),
        ("tPA", "treated with tissue plasminogen activator", "tissue plasminogen activator"),
        ("HINT1", "the histidine triad nucleotide-binding protein 1", "histidine triad nucleotide-binding protein 1"),
        ("PVL", "strains carrying Panton-Valentine leucocidin", "Panton-Valentine leucocidin"),
        ("LBP", "in the LBP group and others", None),  # the short form is no definition of itself
        ("XYZ", "in patients with heart failure", None),  # no word starts with its first letter in reach
        ("2A", "stage two alpha", None),  # a short form starts with a letter
    ],
)
def test_a_short_form_is_matched_letter_by_letter_in_the_words_before_it(short, before, expected):
    assert long_form(short, before) == expected


def test_a_text_gives_every_definition_of_a_short_form_and_ignores_its_other_uses():
    text = (
        "Chronic low back pain (LBP) is common. LBP recurs. Acute low back pain (LBPs, n=40) differed; "
        "a lipopolysaccharide binding protein (LBP) assay was run."
    )
    assert definitions(text, "LBP") == ["low back pain", "low back pain", "lipopolysaccharide binding protein"]
    assert definitions(text, "CLBP") == []


def test_of_two_senses_the_one_whose_abstract_shares_the_questions_words_wins():
    texts = [
        "Surgical site infection (SSI) after colectomy was 8%.",
        "Surgical site infection (SSI) after hernia repair was rare.",
        "Supplemental security income (SSI) reduced disability among older adults.",
    ]
    chosen = best_definition("SSI", texts, "Does SSI cash support cut disability in older adults?")
    assert (chosen.long, chosen.abstracts) == ("supplemental security income", 1)
    usual = best_definition("SSI", texts, "SSI rates - which antibiotic prophylaxis?")
    assert (usual.long, usual.abstracts) == ("surgical site infection", 2)  # no shared word: the commoner sense
    assert best_definition("SSI", ["SSI was 8%."], "SSI?") is None


@pytest.mark.django_db
def test_the_store_defines_shorthand_for_a_question_in_one_query(django_assert_num_queries):
    abstracts_upsert(
        records=[
            AbstractRecord(pmid="101", title="Back pain", abstract="Fear-avoidance in chronic low back pain (LBP)."),
            AbstractRecord(pmid="102", title="Back pain", abstract="Motor control in low back pain (LBP) and LBP."),
            AbstractRecord(pmid="103", title="Sepsis", abstract="Lipopolysaccharide binding protein (LBP) in sepsis."),
            AbstractRecord(pmid="104", title="Imaging", abstract="Positron emission tomography (PET) in lymphoma."),
        ],
        embed=False,
    )
    with django_assert_num_queries(1):
        found = shorthand_definitions(terms=["LBP", "XQZ"], question="Chronic LBP: does fear-avoidance matter?")
    assert [(d.short, d.long, d.abstracts) for d in found] == [("LBP", "low back pain", 2)]


@pytest.mark.django_db
def test_an_abstract_flagged_for_instructions_defines_nothing():
    abstracts_upsert(
        records=[AbstractRecord(pmid="105", title="Pain", abstract="Fear of low back pain (LBP) was measured.")],
        embed=False,
    )
    Abstract.objects.filter(pmid="105").update(has_instructions=True)
    assert shorthand_definitions(terms=["LBP"], question="LBP?") == []
