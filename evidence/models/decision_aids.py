"""Decision aids shown beside answers whose disease and decision tags match: curated diagrams whose every box
rests on a curated finding, or uploaded images."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import models
from simple_history.models import HistoricalRecords

from evidence.models.findings import Finding
from evidence.models.library import Study, tag_array_field


def _validate_image(upload: Any) -> None:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(upload) as image:
            image.verify()
    except (UnidentifiedImageError, OSError) as exc:
        raise ValidationError("Upload a PNG, JPEG, GIF or WebP image (this file is not one).") from exc
    finally:
        upload.seek(0)


class DecisionAid(models.Model):
    """A decision aid shown beside answers that name every one of its conditions and one of its decisions.

    Either a diagram - ordered boxes (`DecisionStep`), each resting on a curated finding, drawn as
    accessible HTML - or an uploaded image (algorithm, flowchart) with its alt text.
    """

    key = models.SlugField(
        max_length=80, unique=True, null=True, blank=True, help_text="Set for the aids the seed file provides."
    )
    title = models.CharField(max_length=200)
    image = models.ImageField(
        upload_to="decision_aids/",
        validators=[_validate_image],
        blank=True,
        help_text="Leave empty for a diagram drawn from its steps.",
    )
    alt_text = models.CharField(
        max_length=300, blank=True, help_text="What the image shows, for screen readers (required with an image)."
    )
    caption = models.TextField(blank=True)
    source = models.ForeignKey(
        Study,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="decision_aids",
        help_text="The guideline or study the aid comes from.",
    )
    source_url = models.URLField(blank=True)
    disease_tags = tag_array_field()
    decision_tags = tag_array_field()
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["title"]

    def __str__(self) -> str:
        return self.title

    def clean(self) -> None:
        if not self.disease_tags or not self.decision_tags:
            raise ValidationError(
                "A decision aid needs at least one disease tag and one decision tag: it is shown only when both match."
            )
        if self.image and not self.alt_text.strip():
            raise ValidationError({"alt_text": "Say what the image shows, for readers who cannot see it."})


class DecisionStep(models.Model):
    """One box of a diagram aid: what to do or weigh, in our own words, and the curated finding it rests on."""

    aid = models.ForeignKey(DecisionAid, on_delete=models.CASCADE, related_name="steps")
    position = models.PositiveSmallIntegerField(default=0, help_text="Order of the box in the diagram.")
    text = models.CharField(
        max_length=300, help_text="The box: one action or question, every number as the finding states it."
    )
    finding = models.ForeignKey(
        Finding,
        on_delete=models.PROTECT,
        related_name="decision_steps",
        help_text="The curated finding the box rests on (its study is cited, its review status shown).",
    )
    history = HistoricalRecords()

    class Meta:
        ordering = ["aid", "position", "id"]

    def __str__(self) -> str:
        return self.text
