"""PubMed: E-utilities client, abstract store with pgvector, ingestion, hybrid search, Tablizer."""
