import factory
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from evidence.models import EvidenceStrength, GuidanceItem, Study, StudyKind


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.org")
    password = factory.PostGenerationMethodCall("set_password", "correct horse battery")

    @factory.post_generation
    def groups(self, create, extracted, **kwargs):
        if create and extracted:
            for name in extracted:
                self.groups.add(Group.objects.get_or_create(name=name)[0])
        if create:
            self.save()


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
