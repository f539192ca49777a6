from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError

from evidence.services.accounts import demo_user_ensure


class Command(BaseCommand):
    help = "Create the demo curator account and print its credentials (embedded development mode only)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--url",
            default="http://127.0.0.1:8000",
            help="where the server will listen, for the login address printed (make run passes its HOST and PORT)",
        )

    def handle(self, *args, **options):
        base = options["url"].rstrip("/")
        try:
            credentials = demo_user_ensure()
        except ImproperlyConfigured as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            self.style.SUCCESS(
                "\n  MedCite demo account (development only)\n"
                f"    username: {credentials.username}\n"
                f"    password: {credentials.password}\n"
                "    a curator: edits the evidence library at /admin/, not users, tokens or lockouts\n"
                "    (create an administrator with `manage.py createsuperuser`)\n"
                f"    log in at {base}/accounts/login/ — admin at {base}/admin/\n"
            )
        )
