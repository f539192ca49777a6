import factory

from chat.models import ConversationApp
from pubmed.models import Abstract
from research.models import AIColumn, AIColumnKind, AIColumnResult
from tests.factories import UserFactory
from trials.parsers import StudySummary


class AIColumnFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = AIColumn

    user = factory.SubFactory(UserFactory)
    page = ConversationApp.TRIALSCOUT
    name = factory.Sequence(lambda n: f"Column {n}")
    criteria = "Does the trial enrol adults over 65?"
    kind = AIColumnKind.BOOLEAN
    provider = "anthropic"
    model = "claude-test"


class AIColumnResultFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = AIColumnResult

    column = factory.SubFactory(AIColumnFactory)
    item_id = factory.Sequence(lambda n: f"NCT{n:08d}")
    value = "yes"
    justification = factory.Faker("sentence", nb_words=8)


class AbstractRowFactory(factory.django.DjangoModelFactory):
    """A stored PubMed abstract as the Tablizer loads it (use `.build()` for a row that is never saved)."""

    class Meta:
        model = Abstract

    pmid = factory.Sequence(lambda n: str(39000000 + n))
    title = factory.Faker("sentence", nb_words=8)
    abstract = factory.Faker("paragraph", nb_sentences=4)
    journal = "The Lancet"
    year = 2021
    publication_types = factory.LazyFunction(lambda: ["Journal Article"])
    mesh_terms = factory.LazyFunction(list)


class StudySummaryFactory(factory.Factory):
    """A ClinicalTrials.gov search result as TrialScout loads it."""

    class Meta:
        model = StudySummary

    nct_id = factory.Sequence(lambda n: f"NCT{5000000 + n:08d}")
    brief_title = factory.Faker("sentence", nb_words=6)
    overall_status = "RECRUITING"
    phases = factory.LazyFunction(lambda: ["PHASE2"])
    study_type = "INTERVENTIONAL"
    lead_sponsor = "National Cancer Institute (NCI)"
    enrollment = 120
    conditions = factory.LazyFunction(lambda: ["Melanoma"])
    interventions = factory.LazyFunction(lambda: [{"type": "DRUG", "name": "Pembrolizumab"}])
    start_date = "2024-01"
    completion_date = "2028-12"
