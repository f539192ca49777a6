"""Celery tasks of the evidence app: ids in, a service call, nothing else."""

from celery import shared_task

from evidence.services.verification import study_identifiers_verify


@shared_task(acks_late=True)
def verify_study_identifiers(*, study_ids: list[int]) -> dict[str, int]:
    """Verify the given studies' PMIDs against PubMed; return the count per check status, retracted and concern."""
    checks = study_identifiers_verify(study_ids=study_ids)
    counts: dict[str, int] = {}
    for check in checks:
        counts[check.status] = counts.get(check.status, 0) + 1
    counts["retracted"] = sum(1 for check in checks if check.retracted)
    counts["expression_of_concern"] = sum(1 for check in checks if check.expression_of_concern)
    return counts
