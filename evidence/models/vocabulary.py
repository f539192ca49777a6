"""The tag vocabulary and the rules built on it: tags, anchor scenarios, classification rules, abbreviations."""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.core.exceptions import ValidationError
from django.db import models
from simple_history.models import HistoricalRecords

from evidence.models.library import Study, tag_array_field


class TagKind(models.TextChoices):
    DISEASE = "disease", "Disease"
    DECISION = "decision", "Decision"


class Tag(models.Model):
    """A term of the tag vocabulary: a disease or a clinical decision, with its synonyms and MeSH mappings.

    The vocabulary is data: curators extend it in admin and every part of the pipeline (PICO
    extraction, classification, ranking, decision aids) picks the change up without a code change.
    """

    code = models.SlugField(max_length=64, unique=True, help_text="Lower-case code used in tags, e.g. af, ckd.")
    kind = models.CharField(max_length=10, choices=TagKind)
    label = models.CharField(max_length=120, help_text="Human-readable name, e.g. atrial fibrillation.")
    synonyms = ArrayField(
        models.CharField(max_length=120),
        default=list,
        blank=True,
        help_text="Words and phrases that mean this tag in a question (matched at word boundaries).",
    )
    mesh_terms = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    broader = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="narrower",
        help_text="The broader tag (hfpef → heart_failure), used to relax the ranking.",
    )
    is_imaging_term = models.BooleanField(
        default=False, help_text="Decision tags only: the question asks for an image, ECG or scan."
    )
    is_generic = models.BooleanField(
        default=False,
        help_text=(
            "Decision tags only: a generic decision (treatment, drug choice). It is the question's main decision "
            "only when nothing more specific is asked, and a topic only when the question says of what "
            "(which anticoagulant)."
        ),
    )
    is_modifier = models.BooleanField(
        default=False,
        help_text=(
            "Disease tags only: narrows a disease (a stage, an assay type). Never the question's main condition "
            "or a topic of its own; sharing only a modifier does not make a study relevant."
        ),
    )
    answer_kind = models.CharField(
        max_length=10,
        blank=True,
        choices=[("drug", "a drug"), ("dose", "a dose"), ("duration", "a duration"), ("timing", "a timing")],
        help_text=(
            "Decision tags only: the kind of answer a question on this decision asks for (drug choice: a drug; "
            "restart: a timing). A cited sentence stating that kind answers the decision; blank for none."
        ),
    )
    patient_wordings = ArrayField(
        models.CharField(max_length=120),
        default=list,
        blank=True,
        help_text=(
            "Wordings of the tag that say who the patients are, not what is asked, when written 'newly …' or "
            "'… with' ('diagnosed' in 'newly diagnosed T2DM', 'diagnosed with AF')."
        ),
    )
    history = HistoricalRecords()

    class Meta:
        ordering = ["kind", "code"]

    def __str__(self) -> str:
        return f"{self.code} ({self.get_kind_display().lower()})"

    def clean(self) -> None:
        self.code = self.code.strip().lower()
        self.synonyms = [synonym.strip() for synonym in self.synonyms if synonym.strip()]
        self.patient_wordings = [wording.strip().lower() for wording in self.patient_wordings if wording.strip()]
        if self.kind == TagKind.DISEASE and self.is_generic:
            raise ValidationError({"is_generic": "Only a decision tag can be a generic decision."})
        if self.kind == TagKind.DECISION and self.is_modifier:
            raise ValidationError({"is_modifier": "Only a disease tag can narrow a disease."})
        if self.kind == TagKind.DISEASE and self.answer_kind:
            raise ValidationError({"answer_kind": "Only a decision tag asks for a kind of answer."})


class AnchorScenario(models.Model):
    """A common clinical scenario with its anchor pack: the guidelines and landmark trials to cite."""

    key = models.SlugField(max_length=64, unique=True)
    title = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    disease_tags = tag_array_field()
    decision_tags = tag_array_field()
    history = HistoricalRecords()

    class Meta:
        ordering = ["key"]

    def __str__(self) -> str:
        return self.title

    def anchor_studies(self) -> models.QuerySet[Study]:
        return Study.objects.filter(anchor_scenarios__contains=[self.key]).order_by(
            "-evidence_strength", "-publication_year"
        )


class ClassificationRule(models.Model):
    """Tags → classification: which MeSH terms to keep or exclude and which anchor scenario applies.

    A rule matches when the question carries every one of its disease tags and (if it lists any)
    at least one of its decision tags. The highest priority match wins.
    """

    name = models.CharField(max_length=120, unique=True)
    classification = models.CharField(max_length=120, help_text="e.g. Anticoagulation in AF with CKD")
    disease_tags = tag_array_field()
    decision_tags = tag_array_field()
    allowed_mesh = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    excluded_mesh = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    anchor_scenario = models.ForeignKey(
        AnchorScenario, null=True, blank=True, on_delete=models.SET_NULL, related_name="rules"
    )
    priority = models.PositiveSmallIntegerField(default=100, help_text="Higher wins when several rules match.")
    history = HistoricalRecords()

    class Meta:
        ordering = ["-priority", "name"]

    def __str__(self) -> str:
        return self.name


class Abbreviation(models.Model):
    """A clinical abbreviation, lay word or spelling variant and the terms it stands for.

    Question understanding and evidence judgement read a question's "NAC" as N-acetylcysteine,
    "elderly" as aged / geriatric and "heart attack" as myocardial infarction, so an abstract that
    uses the other wording still counts as addressing the question. Curators extend the list in
    admin; the answer pipeline picks up a change with the next question.

    One term may have several senses, a row each: "PsA" is Pseudomonas aeruginosa in a question about
    an infection and psoriatic arthritis in one about joints. A sense's `context` lists the words that
    select it; the sense with no context is the usual reading, taken when no other sense's words occur.
    """

    term = models.CharField(
        max_length=60,
        help_text="As a clinician writes it: an abbreviation (NAC), a lay word (heart attack).",
    )
    expansions = ArrayField(
        models.CharField(max_length=120),
        help_text="What the term stands for, each as the literature writes it (N-acetylcysteine, acetylcysteine).",
    )
    case_sensitive = models.BooleanField(
        default=False,
        help_text="Match only as written (capitals): for abbreviations that are also ordinary words (CAP, MS, ALL).",
    )
    context = ArrayField(
        models.CharField(max_length=120),
        default=list,
        blank=True,
        help_text=(
            "For a term with several senses: words or abbreviations in a question that mean this sense "
            "(PsA as Pseudomonas aeruginosa: infection, bacteremia, cystic fibrosis, antibiotic). "
            "Leave empty for the usual reading."
        ),
    )
    history = HistoricalRecords()

    class Meta:
        ordering = ["term", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["term", "expansions"], name="abbreviation_term_sense_unique"),
        ]

    def __str__(self) -> str:
        when = (
            f" (with {', '.join(self.context[:3])}{', ...' if len(self.context) > 3 else ''})" if self.context else ""
        )
        return f"{self.term} → {', '.join(self.expansions)}{when}"

    def clean(self) -> None:
        self.term = " ".join(self.term.split())
        self.expansions = [" ".join(value.split()) for value in self.expansions if value.strip()]
        self.context = list(dict.fromkeys(" ".join(value.split()) for value in self.context if value.strip()))
        if not self.term:
            raise ValidationError({"term": "Give the abbreviation or lay word, e.g. NAC."})
        if not self.expansions:
            raise ValidationError({"expansions": f"Say what {self.term!r} stands for: at least one expansion."})
        others = Abbreviation.objects.exclude(pk=self.pk).filter(case_sensitive=self.case_sensitive)
        others = others.filter(term=self.term) if self.case_sensitive else others.filter(term__iexact=self.term)
        for other in others:
            if other.expansions[:1] == self.expansions[:1]:
                raise ValidationError(
                    {"expansions": f"{self.term!r} already has a sense read as {other.expansions[0]!r}; edit that one."}
                )
            if not other.context and not self.context:
                raise ValidationError(
                    {
                        "context": f"{self.term!r} already has a usual reading ({other.expansions[0]}); "
                        "say which words in a question mean this other sense."
                    }
                )


class DrugClass(models.Model):
    """A class of drugs and the drugs in it: azithromycin is a macrolide, spironolactone an MRA.

    A guideline recommends "a macrolide" and a trial tests dapagliflozin; a question asks about "azithro" or
    "SGLT2i". Question understanding reads a member drug as also meaning its class, and the class as also
    meaning its members, so a source that names the other one still speaks to the question (but a question
    about azithromycin is not answered by one about clarithromycin). Curators extend the classes in admin;
    the answer pipeline picks up a change with the next question.
    """

    name = models.CharField(max_length=120, unique=True, help_text="The class as the literature names it: macrolide.")
    wordings = ArrayField(
        models.CharField(max_length=120),
        default=list,
        blank=True,
        help_text="Other ways the literature names the class (macrolide antibiotic); abbreviations belong in "
        "Abbreviations (MRA → mineralocorticoid receptor antagonist), whose expansion can be the class name.",
    )
    members = ArrayField(
        models.CharField(max_length=120),
        help_text="The drugs in the class, by generic name (azithromycin, clarithromycin, erythromycin).",
    )
    source = models.URLField(
        max_length=300, help_text="Where the membership can be checked: the class's MeSH record or ATC group."
    )
    history = HistoricalRecords()

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "drug classes"

    def __str__(self) -> str:
        return f"{self.name} ({', '.join(self.members[:4])}{', ...' if len(self.members) > 4 else ''})"

    def clean(self) -> None:
        self.name = " ".join(self.name.split())
        self.wordings = list(dict.fromkeys(" ".join(value.split()) for value in self.wordings if value.strip()))
        self.members = list(dict.fromkeys(" ".join(value.split()) for value in self.members if value.strip()))
        if not self.name:
            raise ValidationError({"name": "Name the class, e.g. macrolide."})
        if not self.members:
            raise ValidationError({"members": f"Name at least one drug in the class {self.name!r}."})
        named = {value.lower() for value in (self.name, *self.wordings)}
        if overlap := sorted(member for member in self.members if member.lower() in named):
            raise ValidationError({"members": f"{', '.join(overlap)} names the class itself, not a drug in it."})
