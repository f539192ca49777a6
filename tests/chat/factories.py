import factory

from chat.models import Conversation, ConversationApp, Message, MessageRole
from tests.factories import UserFactory


class ConversationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Conversation

    user = factory.SubFactory(UserFactory)
    app = ConversationApp.CHAT
    title = factory.Faker("sentence", nb_words=6)


class MessageFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Message

    conversation = factory.SubFactory(ConversationFactory)
    role = MessageRole.USER
    content = factory.Faker("sentence", nb_words=12)
