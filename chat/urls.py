from django.urls import path

from chat import views

app_name = "chat"

urlpatterns = [
    path("", views.index, name="index"),
    path("new/", views.conversation_new, name="new"),
    path("<int:pk>/", views.conversation_detail, name="conversation"),
    path("<int:pk>/messages/", views.message_new, name="message-new"),
    path("<int:pk>/messages/<int:message_id>/export/", views.answer_export, name="answer-export"),
]
