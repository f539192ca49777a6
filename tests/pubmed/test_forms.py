"""The Tablizer form: the blank "Any level" option of the level select keeps every level."""

from __future__ import annotations

import pytest

from pubmed.forms import TablizerForm


@pytest.mark.parametrize(
    ("levels", "kept"),
    [
        ([""], []),
        (["", "rct"], ["rct"]),
        (["rct", "cohort"], ["rct", "cohort"]),
    ],
)
def test_blank_level_means_any_level(levels: list[str], kept: list[str]) -> None:
    form = TablizerForm({"q": "colchicine", "level": levels})
    assert form.is_valid(), form.errors
    assert form.cleaned_data["level"] == kept


def test_unknown_level_is_still_refused() -> None:
    form = TablizerForm({"q": "colchicine", "level": ["", "anecdote"]})
    assert not form.is_valid()
    assert form.errors["level"] == ["Select a valid choice. anecdote is not one of the available choices."]
