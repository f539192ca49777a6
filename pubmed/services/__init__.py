"""Business logic of the pubmed app: ingestion, storage, search, reranking, and the Evidence Scout stages."""
