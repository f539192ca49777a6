"""Fixtures of the Tablizer and TrialScout page tests: the fake NCBI and an empty cache per test."""

from tests.pubmed.conftest import efetch_files, eutils_dir, fake_eutils, recorded_articles  # noqa: F401
from tests.trials.conftest import _fresh_throttle_counters  # noqa: F401
