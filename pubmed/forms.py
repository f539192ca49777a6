"""Input of the Tablizer page."""

from __future__ import annotations

from typing import Any

from django import forms

from evidence.levels import EvidenceLevel
from pubmed.selectors import TABLIZER_SORTS
from pubmed.services.tablizer import MAX_ROWS, PAGE_ROWS


class LevelsField(forms.MultipleChoiceField):
    """Levels of evidence to keep; the blank "Any level" option selects none, so every level is kept."""

    def to_python(self, value: Any) -> list[str]:
        return [level for level in super().to_python(value) if level]


class TablizerForm(forms.Form):
    q = forms.CharField(label="PubMed query", max_length=1000, required=False, strip=True)
    year_from = forms.IntegerField(label="From year", min_value=1800, max_value=2100, required=False)
    year_to = forms.IntegerField(label="To year", min_value=1800, max_value=2100, required=False)
    n = forms.IntegerField(min_value=1, max_value=MAX_ROWS, required=False)
    sort = forms.ChoiceField(choices=[(key, key) for key in TABLIZER_SORTS], required=False)
    dir = forms.ChoiceField(choices=[("asc", "asc"), ("desc", "desc")], required=False)
    level = LevelsField(label="Level of evidence", choices=EvidenceLevel.choices, required=False)

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        start, end = data.get("year_from"), data.get("year_to")
        if start and end and start > end:
            raise forms.ValidationError(f"The start year {start} is after the end year {end}.")
        data["n"] = data.get("n") or PAGE_ROWS
        data["sort"] = data.get("sort") or "relevance"
        data["dir"] = data.get("dir") or ("desc" if data["sort"] == "year" else "asc")
        return data
