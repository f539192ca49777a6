import factory

from evidence.models import EvidenceStrength, GuidanceItem, Study, StudyKind


class GuidanceItemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = GuidanceItem

    title = factory.Sequence(lambda n: f"Guidance {n}")
    statement = factory.Faker("sentence")
    disease_tags = factory.LazyFunction(lambda: ["af"])


class StudyFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Study

    study_name = factory.Sequence(lambda n: f"STUDY-{n}")
    pmid = factory.Sequence(lambda n: str(30000000 + n))
    title = factory.Faker("sentence", nb_words=10)
    journal = "N Engl J Med"
    publication_year = 2020
    key_finding = factory.Faker("sentence", nb_words=20)
    disease_tags = factory.LazyFunction(lambda: ["af"])
    evidence_strength = EvidenceStrength.MODERATE
    kind = StudyKind.TRIAL
