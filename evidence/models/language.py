"""Clinical language as data: the words that name no topic, each with the classes it belongs to."""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.core.exceptions import ValidationError
from django.db import models
from simple_history.models import HistoricalRecords

from evidence.language.words import WordClass


class Word(models.Model):
    """A word (or phrase) and the curated classes it belongs to: most classes name no topic (grammar, ways of
    asking), two are cues to a word's part in a question (an outcome, older patients).

    Question understanding, the live PubMed query, the search reranker, the extractive composer and the
    tray's request reader all read these rows (`evidence.language.words`); a curator's edit applies from
    the next request. A word in no class is not allowed: delete the row instead.
    """

    text = models.CharField(max_length=120, unique=True, help_text="Lower case, as a question writes it.")
    classes = ArrayField(
        models.CharField(max_length=20, choices=WordClass),
        help_text="Every class the word belongs to.",
    )
    history = HistoricalRecords()

    class Meta:
        ordering = ["text"]

    def __str__(self) -> str:
        return self.text

    def clean(self) -> None:
        self.text = " ".join(self.text.lower().split())
        self.classes = sorted(set(self.classes))
        if not self.text:
            raise ValidationError({"text": "A word cannot be blank."})
        if not self.classes:
            raise ValidationError({"classes": "Give the word at least one class, or delete it."})
