"""Business logic of the pubmed app: ingestion, storage, search, reranking, query expansion, synthesis."""
