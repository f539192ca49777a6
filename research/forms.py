"""The Evidence Scout form: drug, disease and an optional drug profile (fields, JSON, or an earlier run's)."""

from __future__ import annotations

import json
import re
from typing import Any

from django import forms

LIST_FIELDS = ("synonyms", "targets", "mechanisms", "atc_codes", "atc_descriptions")
LIST_HELP = "One per line (or separated by semicolons)."


def _items(text: str) -> list[str]:
    return [item.strip() for item in re.split(r"[\n;]", text or "") if item.strip()]


class ScoutForm(forms.Form):
    drug = forms.CharField(max_length=200, help_text="e.g. gefitinib")
    disease = forms.CharField(max_length=200, help_text="e.g. non-small cell lung cancer")
    synonyms = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}), help_text=LIST_HELP,
                               label="Synonyms (brand and code names)")
    targets = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}), help_text=LIST_HELP,
                              label="Target gene symbols")
    mechanisms = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}), help_text=LIST_HELP,
                                 label="Mechanisms of action")
    atc_codes = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 1}), help_text=LIST_HELP,
                                label="ATC codes")
    atc_descriptions = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}), help_text=LIST_HELP,
                                       label="ATC descriptions (drug classes)")
    drug_type = forms.CharField(required=False, max_length=200, label="Drug type",
                                help_text="e.g. small molecule, monoclonal antibody")
    profile_json = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}), label="Profile as JSON",
                                   help_text='Replaces the fields above, e.g. {"targets": ["EGFR"]}.')
    previous_profile = forms.TypedChoiceField(required=False, coerce=int, empty_value=None,
                                              label="Or use a profile from an earlier run")
    max_pmids = forms.IntegerField(required=False, min_value=1, max_value=500, label="PMIDs per query",
                                   help_text="At most 500.")

    def __init__(self, *args: Any, previous: list[dict[str, Any]] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.previous = previous or []
        previous_field = self.fields["previous_profile"]
        assert isinstance(previous_field, forms.ChoiceField)
        previous_field.choices = [("", "—")] + [
            (index, f"{item['drug']}: {json.dumps(item['profile'], sort_keys=True)[:80]}")
            for index, item in enumerate(self.previous)
        ]

    def profile_input(self) -> dict[str, Any] | str:
        """Return the profile the researcher gave: JSON text as typed, an earlier run's, or the fields."""
        data = self.cleaned_data
        if data.get("profile_json", "").strip():
            return str(data["profile_json"])
        if data.get("previous_profile") is not None:
            return dict(self.previous[data["previous_profile"]]["profile"])
        profile: dict[str, Any] = {name: _items(data.get(name, "")) for name in LIST_FIELDS}
        profile["drug_type"] = data.get("drug_type", "")
        return profile
