from evidence.text import split_sentences


def test_sentence_splitter_keeps_abbreviations_and_trailing_markers_together():
    assert split_sentences("Tie et al. showed it. \u27e60\u27e7 Next one, e.g. here. Done.") == [
        "Tie et al. showed it. \u27e60\u27e7",
        "Next one, e.g. here.",
        "Done.",
    ]
