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


def test_a_question_is_read_with_what_define_says_of_the_shorthand_no_row_knows():
    asked: list[tuple[tuple[str, ...], str]] = []

    class Definition:
        def __init__(self, short: str, long: str) -> None:
            self.short, self.long, self.abstracts = short, long, 1

    def define(*, terms, question):
        asked.append((tuple(terms), question))
        return [Definition(term, "low back pain") for term in terms if term == "LBP"]

    question = "DYNAMIC and chronic LBP in AF, on tPA?"
    lexicon, defined = CURATED.read_for(question, names=["DYNAMIC"], define=define)
    assert asked == [(("LBP", "tPA"), question)]  # one call, the study's name and curated "AF" left out
    assert [(d.short, d.long) for d in defined] == [("LBP", "low back pain")]
    assert lexicon.spelled_out(question) == ["low back pain", "atrial fibrillation"]
    # Without a reader of definitions, or with nothing unknown, nothing is asked.
    assert CURATED.read_for(question)[1] == []
    assert CURATED.read_for("AF in CKD?", define=define)[1] == [] and len(asked) == 1
