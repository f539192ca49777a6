from __future__ import annotations

from collections.abc import Sequence

from django.apps import AppConfig


def _queue_identifier_checks(study_ids: Sequence[int]) -> None:
    from pubmed.tasks import verify_study_identifiers

    verify_study_identifiers.delay(study_ids=list(study_ids))


class PubmedConfig(AppConfig):
    name = "pubmed"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        """Offer the library admin's identifier check, which needs this app's E-utilities client, and give
        the citation checker stored (or fetched) abstracts for PMIDs, DOIs and PMC ids, and the embedder."""
        from evidence.identifier_checks import identifier_checks_register
        from evidence.services.citation_check import cited_source_lookup_register, claim_embedder_register
        from pubmed.embeddings import embed_cached
        from pubmed.services.citation_sources import abstracts_for_dois, abstracts_for_pmcids, abstracts_for_pmids

        identifier_checks_register(_queue_identifier_checks)
        cited_source_lookup_register(kind="pmid", lookup=abstracts_for_pmids)
        cited_source_lookup_register(kind="doi", lookup=abstracts_for_dois)
        cited_source_lookup_register(kind="pmcid", lookup=abstracts_for_pmcids)
        claim_embedder_register(embed_cached)
