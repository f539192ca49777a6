from __future__ import annotations

from django.apps import AppConfig


class PubmedConfig(AppConfig):
    name = "pubmed"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        """Offer the library admin's identifier check, which needs this app's E-utilities client, and give
        the citation checker stored (or fetched) abstracts for PMIDs, DOIs and PMC ids; give the evidence layer the
        sentence embedder (claim checks and instruction screening);
        register the app's Celery tasks, which `pubmed.dispatch` queues by name."""
        import pubmed.tasks  # noqa: F401
        from evidence.embedding import embedder_register
        from evidence.identifier_checks import identifier_checks_register
        from evidence.services.cited_sources import cited_source_lookup_register
        from pubmed.dispatch import study_identifiers_verify_enqueue
        from pubmed.embeddings import embed_cached
        from pubmed.services.citation_sources import abstracts_for_dois, abstracts_for_pmcids, abstracts_for_pmids

        identifier_checks_register(study_identifiers_verify_enqueue)
        cited_source_lookup_register(kind="pmid", lookup=abstracts_for_pmids)
        cited_source_lookup_register(kind="doi", lookup=abstracts_for_dois)
        cited_source_lookup_register(kind="pmcid", lookup=abstracts_for_pmcids)
        embedder_register(embed_cached)
