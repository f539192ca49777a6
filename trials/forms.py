"""The TrialScout search form (GET: the URL carries the search, so it can be shared and reloaded)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.validators import RegexValidator

from trials.constants import PAGE_TOKEN_MESSAGE, PAGE_TOKEN_PATTERN, PHASES, SEARCHABLE_STATUSES, SORTS

TEXT_MAX_LENGTH = 300
CRITERIA_FIELDS = ("condition", "intervention", "sponsor", "q", "phase", "status")


class CommaSeparatedMultipleChoiceField(forms.MultipleChoiceField):
    """A multiple choice that also accepts `PHASE2,PHASE3` in one value, in any letter case."""

    def to_python(self, value: Any) -> list[str]:
        values = super().to_python(value)
        return [part.strip().upper() for item in values for part in item.split(",") if part.strip()]


class TrialSearchForm(forms.Form):
    condition = forms.CharField(
        required=False,
        max_length=TEXT_MAX_LENGTH,
        label="Condition or disease",
        widget=forms.TextInput(attrs={"type": "search", "placeholder": "e.g. melanoma"}),
    )
    intervention = forms.CharField(
        required=False,
        max_length=TEXT_MAX_LENGTH,
        label="Intervention or treatment",
        widget=forms.TextInput(attrs={"type": "search", "placeholder": "e.g. pembrolizumab"}),
    )
    sponsor = forms.CharField(
        required=False,
        max_length=TEXT_MAX_LENGTH,
        label="Lead sponsor",
        widget=forms.TextInput(attrs={"type": "search", "placeholder": "e.g. Merck Sharp & Dohme LLC"}),
    )
    q = forms.CharField(
        required=False,
        max_length=TEXT_MAX_LENGTH,
        label="Other terms",
        widget=forms.TextInput(attrs={"type": "search", "placeholder": "e.g. EGFR L858R"}),
    )
    phase = CommaSeparatedMultipleChoiceField(
        required=False,
        label="Phase",
        choices=list(PHASES.items()),
        widget=forms.CheckboxSelectMultiple,
        error_messages={"invalid_choice": "%(value)s is not a phase; pick from the list."},
    )
    status = CommaSeparatedMultipleChoiceField(
        required=False,
        label="Status",
        choices=list(SEARCHABLE_STATUSES.items()),
        widget=forms.CheckboxSelectMultiple,
        error_messages={"invalid_choice": "%(value)s is not a status TrialScout searches by; pick from the list."},
    )
    sort = forms.ChoiceField(
        required=False,
        label="Sort by",
        choices=[("", "Registry order"), *[(k, v[1]) for k, v in SORTS.items()]],
    )
    page_token = forms.CharField(
        required=False,
        widget=forms.HiddenInput,
        validators=[RegexValidator(PAGE_TOKEN_PATTERN, PAGE_TOKEN_MESSAGE)],
    )

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        if not self.errors and not any(cleaned.get(name) for name in CRITERIA_FIELDS):
            raise forms.ValidationError(
                "Fill in a condition, intervention, lead sponsor or other terms, or pick a phase or status."
            )
        return cleaned

    def search_kwargs(self) -> dict[str, Any]:
        """Return the arguments of `trials.services.trial_search` for a valid form."""
        data = self.cleaned_data
        return {
            "condition": data["condition"],
            "intervention": data["intervention"],
            "sponsor": data["sponsor"],
            "term": data["q"],
            # Keep the order the choices are listed in, whatever order the URL gave.
            "phases": [phase for phase in PHASES if phase in data["phase"]],
            "statuses": [status for status in SEARCHABLE_STATUSES if status in data["status"]],
            "sort": data["sort"],
            "page_token": data["page_token"] or None,
        }
