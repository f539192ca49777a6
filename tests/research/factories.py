import factory

from chat.models import ConversationApp
from research.models import AIColumn, AIColumnKind, AIColumnResult
from tests.factories import UserFactory


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
