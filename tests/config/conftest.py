"""The production-stack test serves ingestions from the fake E-utilities of the pubmed tests."""

from tests.pubmed.conftest import efetch_files, eutils_dir, fake_eutils, recorded_articles  # noqa: F401
