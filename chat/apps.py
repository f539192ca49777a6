from django.apps import AppConfig


class ChatConfig(AppConfig):
    name = "chat"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from chat import checks  # noqa: F401  (registers the system checks)
        from chat.warm_up import start_warm_up

        start_warm_up()
