"""Fixtures of the Tablizer and TrialScout page tests: the fake NCBI, an empty cache, a signed-in client."""

import pytest
from django.test import Client

from tests.factories import UserFactory
from tests.pubmed.conftest import efetch_files, eutils_dir, fake_eutils, recorded_articles  # noqa: F401
from tests.trials.conftest import _fresh_throttle_counters  # noqa: F401


@pytest.fixture
def client(client: Client, db: None) -> Client:
    """Return the test client signed in: these pages call PubMed or ClinicalTrials.gov, so they need an account."""
    client.force_login(UserFactory(username="researcher"))
    return client
