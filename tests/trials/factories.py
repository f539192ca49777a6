"""factory-boy factories for the trials app."""

from __future__ import annotations

import factory
from django.utils import timezone

from trials.models import Trial


class TrialFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Trial
        django_get_or_create = ("nct_id",)

    nct_id = factory.Sequence(lambda n: f"NCT{90000000 + n:08d}")
    brief_title = factory.Faker("sentence", nb_words=8)
    official_title = factory.Faker("sentence", nb_words=14)
    brief_summary = factory.Faker("paragraph")
    study_type = "INTERVENTIONAL"
    phases = factory.LazyFunction(lambda: ["PHASE2"])
    overall_status = "RECRUITING"
    lead_sponsor = factory.Faker("company")
    enrollment = factory.Faker("pyint", min_value=10, max_value=900)
    enrollment_type = "ESTIMATED"
    conditions = factory.LazyFunction(lambda: ["Melanoma"])
    interventions = factory.LazyFunction(lambda: [{"type": "DRUG", "name": "Pembrolizumab"}])
    eligibility_criteria = "Inclusion Criteria:\n\n* Adults\n\nExclusion Criteria:\n\n* Pregnancy"
    inclusion_criteria = "* Adults"
    exclusion_criteria = "* Pregnancy"
    minimum_age = "18 Years"
    sex = "ALL"
    healthy_volunteers = False
    primary_outcomes = factory.LazyFunction(
        lambda: [{"measure": "Overall survival", "description": "", "time_frame": "5 years"}]
    )
    start_date = "2024-01"
    completion_date = "2028-12"
    locations_count = 3
    last_update = "2025-06-01"
    fetched_at = factory.LazyFunction(timezone.now)
