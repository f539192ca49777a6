from pathlib import Path

from django.apps import AppConfig
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


class EvidenceConfig(AppConfig):
    name = "evidence"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The claim verifier decides what an answer may say: without it MedCite does not start (no fall-back to
        # rules). The files and their sha256 are checked here; the model itself loads on first use.
        # So does the instruction detector's semantic half: its weights are loaded (and their sha256 checked) now.
        # And the model that keeps a clinical question in unknown words from being called non-clinical, and the one
        # that reads which part of an unlabelled abstract a sentence is.
        from evidence.claims.model import VerifierModelError, read_config
        from evidence.clinical_question import ClinicalQuestionModelError, clinical_question_model
        from evidence.injection_semantic import SemanticModelError, semantic_classifier
        from evidence.sentence_roles import SentenceRoleModelError, sentence_roles

        try:
            read_config(Path(settings.VERIFIER_MODEL))
            semantic_classifier()
            clinical_question_model()
            sentence_roles()
        except (VerifierModelError, SemanticModelError, ClinicalQuestionModelError, SentenceRoleModelError) as exc:
            raise ImproperlyConfigured(str(exc)) from exc
