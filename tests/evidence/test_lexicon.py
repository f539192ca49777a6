"""The lexicon's reading of shorthand it does not spell out, and terms added for one question."""

from evidence.lexicon import Lexicon

CURATED = Lexicon.build([("AF", ["atrial fibrillation"], True), ("CKD", ["chronic kidney disease"], False)])


def test_unknown_shorthand_is_a_word_with_two_capitals_or_more_that_no_row_spells_out():
    question = "Stage III chronic LBP in AF with CKD, on IV tPA - does HINT1, DYNAMIC or PROMs matter? LBP again, Ok?"
    # "III" and "IV" are Roman numerals, "AF" and "CKD" curated, "DYNAMIC" a study's name, "Ok" one capital.
    assert CURATED.unknown_shorthand(question, names=["Dynamic"]) == ["LBP", "tPA", "HINT1", "PROMs"]


def test_a_term_added_for_one_question_is_spelled_out_and_found_afresh():
    question = "Chronic LBP in AF?"
    assert CURATED.spelled_out(question) == ["atrial fibrillation"]  # the curated lexicon's reading is cached
    added = CURATED.with_terms([("LBP", ("low back pain",), False, ())])
    assert added.spelled_out(question) == ["low back pain", "atrial fibrillation"]
    assert added.unknown_shorthand(question) == []
    assert CURATED.spelled_out(question) == ["atrial fibrillation"]  # the curated lexicon is unchanged
    # A curated row wins over a term added with the same spelling.
    assert CURATED.with_terms([("AF", ("anal fissure",), True, ())]).spelled_out(question) == ["atrial fibrillation"]
