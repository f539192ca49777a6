"""NCBI E-utilities settings (PubMed search, fetch and summaries)."""

from django.core.exceptions import ImproperlyConfigured

from config.settings.environment import env

NCBI_EUTILS_BASE_URL = env.str("NCBI_EUTILS_BASE_URL", default="https://eutils.ncbi.nlm.nih.gov/entrez/eutils/")
if not NCBI_EUTILS_BASE_URL.endswith("/"):
    NCBI_EUTILS_BASE_URL += "/"
NCBI_API_KEY = env.str("NCBI_API_KEY", default="")
NCBI_TOOL = env.str("NCBI_TOOL", default="medcite")
NCBI_EMAIL = env.str("NCBI_EMAIL", default="")
NCBI_TIMEOUT_SECONDS = env.float("NCBI_TIMEOUT_SECONDS", default=20.0)
NCBI_MAX_RETRIES = env.int("NCBI_MAX_RETRIES", default=4)
# Requests per second allowed by NCBI: 3 without an API key, 10 with one.
NCBI_REQUESTS_PER_SECOND = 10 if NCBI_API_KEY else 3
NCBI_ESEARCH_CACHE_TTL_SECONDS = env.int("NCBI_ESEARCH_CACHE_TTL_SECONDS", default=24 * 3600)
# Identical searches running at once coalesce: the others wait this long for the first (then read its
# results from the cache and the store); the lock's lease frees it should its holder die.
NCBI_SINGLE_FLIGHT_WAIT_SECONDS = env.float("NCBI_SINGLE_FLIGHT_WAIT_SECONDS", default=20.0)
NCBI_SINGLE_FLIGHT_LEASE_SECONDS = env.float("NCBI_SINGLE_FLIGHT_LEASE_SECONDS", default=120.0)
# Exponential backoff with jitter between retries (429, 5xx, connection errors, timeouts).
NCBI_BACKOFF_INITIAL_SECONDS = env.float("NCBI_BACKOFF_INITIAL_SECONDS", default=0.5)
NCBI_BACKOFF_MAX_SECONDS = env.float("NCBI_BACKOFF_MAX_SECONDS", default=10.0)
# A Retry-After longer than this is not waited for: the call fails with EutilsUnavailable instead.
NCBI_RETRY_AFTER_MAX_SECONDS = env.float("NCBI_RETRY_AFTER_MAX_SECONDS", default=60.0)
# The limiter's window is one second plus this margin, so network jitter between our clock and
# NCBI's never puts a fourth request into one of NCBI's one-second windows.
NCBI_RATE_LIMIT_MARGIN_SECONDS = env.float("NCBI_RATE_LIMIT_MARGIN_SECONDS", default=0.1)

if not NCBI_EUTILS_BASE_URL.startswith(("http://", "https://")):
    raise ImproperlyConfigured(f"NCBI_EUTILS_BASE_URL must be an http(s) URL, got {NCBI_EUTILS_BASE_URL!r}.")
if NCBI_MAX_RETRIES < 0:
    raise ImproperlyConfigured(f"NCBI_MAX_RETRIES must be 0 or more, got {NCBI_MAX_RETRIES}.")
if NCBI_TIMEOUT_SECONDS <= 0:
    raise ImproperlyConfigured(f"NCBI_TIMEOUT_SECONDS must be positive, got {NCBI_TIMEOUT_SECONDS}.")
