"""Evidence Scout settings: PMIDs per query, the MeSH tree for broadening, the local reranker model."""

from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from config.settings.environment import BASE_DIR, env

# Most PMIDs fetched per expanded query (NCBI esearch gives 500 per page; more would page).
SCOUT_MAX_PMIDS_PER_QUERY = env.int("SCOUT_MAX_PMIDS_PER_QUERY", default=500)
# Disease normalisations, PubMed counts and query expansions are reused for this long.
SCOUT_CACHE_SECONDS = env.int("SCOUT_CACHE_SECONDS", default=5 * 24 * 3600)
# The NLM MeSH tree used to broaden a disease name one level up; missing means no MeSH broadening.
MESH_TREE_PATH = Path(
    env.str("MESH_TREE_PATH", default="")
    or str(BASE_DIR.parent / "shared" / "data" / "mesh" / "2017MeshTree.txt")
)
# A local sentence-transformers cross-encoder directory for reranking (never downloaded); empty = none.
RERANKER_MODEL = env.str("RERANKER_MODEL", default="")

if not 1 <= SCOUT_MAX_PMIDS_PER_QUERY <= 500:
    raise ImproperlyConfigured(
        f"SCOUT_MAX_PMIDS_PER_QUERY must be between 1 and 500, got {SCOUT_MAX_PMIDS_PER_QUERY}."
    )
if RERANKER_MODEL and not Path(RERANKER_MODEL).is_dir():
    raise ImproperlyConfigured(
        f"RERANKER_MODEL={RERANKER_MODEL!r} is not a directory; point it at a local sentence-transformers "
        "cross-encoder (config.json and weights), or leave it empty for the built-in lexical reranker."
    )
