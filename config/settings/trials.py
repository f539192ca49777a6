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
# Exponential backoff with jitter between retries (429, 5xx, connection errors, timeouts).
CTGOV_BACKOFF_INITIAL_SECONDS = env.float("CTGOV_BACKOFF_INITIAL_SECONDS", default=0.5)
CTGOV_BACKOFF_MAX_SECONDS = env.float("CTGOV_BACKOFF_MAX_SECONDS", default=10.0)
# A Retry-After longer than this is not waited for: the call fails with CtgovUnavailable instead.
CTGOV_RETRY_AFTER_MAX_SECONDS = env.float("CTGOV_RETRY_AFTER_MAX_SECONDS", default=30.0)
# Trials per TrialScout page and per API search page unless the API caller asks for another size.
CTGOV_PAGE_SIZE = env.int("CTGOV_PAGE_SIZE", default=20)
# Anonymous reads of /api/v1/trials/ each cost a ClinicalTrials.gov call: throttled on their own.
CTGOV_API_ANON_RATE = env.str("CTGOV_API_ANON_RATE", default="30/min")

if not CTGOV_BASE_URL.startswith(("http://", "https://")):
    raise ImproperlyConfigured(f"CTGOV_BASE_URL must be an http(s) URL, got {CTGOV_BASE_URL!r}.")
if CTGOV_MAX_RETRIES < 0:
    raise ImproperlyConfigured(f"CTGOV_MAX_RETRIES must be 0 or more, got {CTGOV_MAX_RETRIES}.")
if CTGOV_TIMEOUT_SECONDS <= 0:
    raise ImproperlyConfigured(f"CTGOV_TIMEOUT_SECONDS must be positive, got {CTGOV_TIMEOUT_SECONDS}.")
if CTGOV_CACHE_TTL_SECONDS < 0:
    raise ImproperlyConfigured(f"CTGOV_CACHE_TTL_SECONDS must be 0 or more, got {CTGOV_CACHE_TTL_SECONDS}.")
if not 1 <= CTGOV_PAGE_SIZE <= 100:
    raise ImproperlyConfigured(f"CTGOV_PAGE_SIZE must be between 1 and 100, got {CTGOV_PAGE_SIZE}.")
