"""Decision aids: curated images shown beside answers whose disease and decision tags match."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import models
from simple_history.models import HistoricalRecords

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
    """A curated image (algorithm, flowchart) shown beside answers whose disease and decision tags match."""

    title = models.CharField(max_length=200)
    image = models.ImageField(upload_to="decision_aids/", validators=[_validate_image])
    alt_text = models.CharField(max_length=300, help_text="What the image shows, for screen readers.")
    caption = models.TextField(blank=True)
    source = models.ForeignKey(
        Study,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="decision_aids",
        help_text="The guideline or study the image comes from.",
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
