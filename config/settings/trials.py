"""ClinicalTrials.gov API v2 settings."""

from django.core.exceptions import ImproperlyConfigured

from config.settings.environment import env

CTGOV_BASE_URL = env.str("CTGOV_BASE_URL", default="https://clinicaltrials.gov/api/v2/")
if not CTGOV_BASE_URL.endswith("/"):
    CTGOV_BASE_URL += "/"
CTGOV_TIMEOUT_SECONDS = env.float("CTGOV_TIMEOUT_SECONDS", default=20.0)
CTGOV_MAX_RETRIES = env.int("CTGOV_MAX_RETRIES", default=4)
# A cached trial older than this is fetched again.
CTGOV_CACHE_TTL_SECONDS = env.int("CTGOV_CACHE_TTL_SECONDS", default=7 * 24 * 3600)

if not CTGOV_BASE_URL.startswith(("http://", "https://")):
    raise ImproperlyConfigured(f"CTGOV_BASE_URL must be an http(s) URL, got {CTGOV_BASE_URL!r}.")
