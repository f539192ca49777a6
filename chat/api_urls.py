from django.urls import path

from chat import apis

urlpatterns = [
    path("conversations/", apis.ConversationListCreateApi.as_view(), name="chat-api-conversations"),
    path("conversations/<int:pk>/", apis.ConversationDetailApi.as_view(), name="chat-api-conversation"),
    path("conversations/<int:pk>/messages/", apis.ConversationMessagesApi.as_view(), name="chat-api-messages"),
    path(
        "conversations/<int:pk>/messages/<int:message_id>/export",
        apis.AnswerExportApi.as_view(),
        name="chat-api-answer-export",
    ),
]
