"""Conversations and their messages; answers keep their citations, references and pipeline trace."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ConversationApp(models.TextChoices):
    CHAT = "chat", "Chat"
    TABLIZER = "tablizer", "Tablizer"
    TRIALSCOUT = "trialscout", "TrialScout"


class Conversation(models.Model):
    """A thread of questions and answers owned by one user, in one of MedCite's apps."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="conversations")
    app = models.CharField(max_length=16, choices=ConversationApp, default=ConversationApp.CHAT)
    title = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-id"]
        indexes = [models.Index(fields=["user", "app"], name="conversation_user_app_idx")]

    def __str__(self) -> str:
        return self.title or f"Conversation {self.pk}"


class MessageRole(models.TextChoices):
    USER = "user", "User"
    ASSISTANT = "assistant", "Assistant"


class Message(models.Model):
    """One turn. `extras` of an answer holds citations, references, payloads, tool calls and the trace."""

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=16, choices=MessageRole)
    content = models.TextField()
    context = models.JSONField(
        default=dict, blank=True, help_text="What the answer was built from: tags, intent, filters."
    )
    extras = models.JSONField(
        default=dict,
        blank=True,
        help_text="citations, references, confidence, abstained, trace, tool_calls, payloads, error.",
    )
    settings_hash = models.CharField(
        max_length=16, blank=True, help_text="Short hash of the answer-pipeline settings that produced it."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["conversation", "created_at"], name="message_conversation_idx")]

    def __str__(self) -> str:
        return f"{self.role}: {self.content[:60]}"

    @property
    def confidence(self) -> str:
        return str(self.extras.get("confidence", ""))

    @property
    def references(self) -> list[dict]:
        return list(self.extras.get("references", []))
