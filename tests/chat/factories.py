import factory
from django.contrib.auth import get_user_model

from chat.models import Conversation, ConversationApp, Message, MessageRole


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"clinician{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.org")
    password = factory.PostGenerationMethodCall("set_password", "correct horse battery")

    @factory.post_generation
    def saved(self, create, extracted, **kwargs):
        if create:
            self.save()


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
