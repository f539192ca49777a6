"""Core Django settings: database, apps, security, static files, logging, Celery, DRF."""

from __future__ import annotations

import warnings
from datetime import timedelta
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from config.logging import build_logging_config
from config.settings.environment import BASE_DIR, env

DEBUG = env.bool("DJANGO_DEBUG", default=True)

VAR_DIR = Path(env.str("MEDCITE_VAR_DIR", default=str(BASE_DIR / "var")))

if DEBUG:
    SECRET_KEY = env("SECRET_KEY", default="medcite-development-only-not-secret")
    ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"])
else:
    try:
        SECRET_KEY = env("SECRET_KEY")
        ALLOWED_HOSTS = env.list("ALLOWED_HOSTS")
    except ImproperlyConfigured as exc:
        raise ImproperlyConfigured(
            "Production mode (DJANGO_DEBUG=0) needs SECRET_KEY and ALLOWED_HOSTS set in the environment, "
            "e.g. SECRET_KEY=$(openssl rand -hex 32) ALLOWED_HOSTS=medcite.example.org"
        ) from exc
    if len(SECRET_KEY) < 50:
        raise ImproperlyConfigured("SECRET_KEY must be at least 50 characters long in production.")

# --- Database ------------------------------------------------------------------------------
# No DATABASE_URL: the embedded PostgreSQL 18 + pgvector server (data under var/pgdata).
EMBEDDED_DATABASE = not env.str("DATABASE_URL", default="")
if EMBEDDED_DATABASE:
    from config.embedded_db import embedded_database_url

    _database_url = embedded_database_url(VAR_DIR / "pgdata")
else:
    _database_url = env.str("DATABASE_URL")
DATABASES = {"default": env.db_url_config(_database_url)}
# Served by ASGI (uvicorn workers), each request's synchronous code runs in a thread of its own: a persistent
# connection (CONN_MAX_AGE) stays with a thread that never serves again, and at 20 answers a second the database
# refused new clients within seconds. Production therefore borrows connections from a pool per process, returned
# when each request ends; DATABASE_POOL_MAX_SIZE=0 turns the pool off (then DATABASE_CONN_MAX_AGE applies).
DATABASE_POOL_MAX_SIZE = env.int("DATABASE_POOL_MAX_SIZE", default=0 if DEBUG else 20)
if DATABASE_POOL_MAX_SIZE:
    DATABASES["default"]["CONN_MAX_AGE"] = 0  # Django's pool requires it
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1,
        "max_size": DATABASE_POOL_MAX_SIZE,
        # A request waits this long for a connection when all are lent, then fails rather than hang.
        "timeout": env.float("DATABASE_POOL_TIMEOUT_SECONDS", default=10.0),
    }
else:
    DATABASES["default"]["CONN_MAX_AGE"] = env.int("DATABASE_CONN_MAX_AGE", default=0)
DATABASES["default"]["TEST"] = {"NAME": env.str("TEST_DATABASE_NAME", default="test_medcite")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Applications --------------------------------------------------------------------------
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "simple_history",
    "import_export",
    "axes",
    "csp",
    "evidence",
    "pubmed",
    "trials",
    "chat",
    "research",
]

MIDDLEWARE = [
    "config.middleware.RequestIdMiddleware",
    # Outside everything that can fail, so even DEBUG's technical 404/500 pages under /api/ become JSON.
    "config.middleware.ApiErrorMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
AUTHENTICATION_BACKENDS = [
    # First, so a locked-out username or address is refused before its password is checked.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
LOGIN_URL = "login"

# --- Login throttling (django-axes) ------------------------------------------------------------
# Failed log-ins (site and admin) are counted in the database, so every web process shares the counts,
# and judged by config.login_throttle.LoginThrottleHandler so that no one can lock someone else out:
# - per (username, address) pair: LOGIN_FAILURE_LIMIT failures lock that pair (HTTP 429) for
#   LOGIN_LOCKOUT_MINUTES. Guesses at dr-ada's password from elsewhere never lock dr-ada out at her desk.
# - per address: LOGIN_ADDRESS_FAILURE_LIMIT failures across usernames lock the address; high enough for a
#   clinic behind one NAT address, whose colleagues' typos add up.
# - per username: past LOGIN_USERNAME_SLOW_AFTER failures from everywhere, addresses that have never signed
#   the username in get one attempt per LOGIN_USERNAME_SLOW_SECONDS (slowed, not locked); addresses it has
#   signed in from are not slowed.
# Sessions and API tokens already issued keep working during a lockout: it guards the password against
# guessing, a token cannot be guessed, and refusing tokens would let anyone who mistypes a user's password
# cut that user's integrations off. A successful log-in clears its pair's count.
AXES_ENABLED = env.bool("LOGIN_THROTTLE_ENABLED", default=True)
AXES_HANDLER = "config.login_throttle.LoginThrottleHandler"
AXES_USERNAME_CALLABLE = "config.login_throttle.attempted_username"
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("LOGIN_LOCKOUT_MINUTES", default=15))
LOGIN_ADDRESS_FAILURE_LIMIT = env.int("LOGIN_ADDRESS_FAILURE_LIMIT", default=50)
LOGIN_USERNAME_SLOW_AFTER = env.int("LOGIN_USERNAME_SLOW_AFTER", default=10)
LOGIN_USERNAME_SLOW_SECONDS = env.int("LOGIN_USERNAME_SLOW_SECONDS", default=30)
# Attempts refused during a lockout or slowdown are not counted, so they neither extend it nor re-arm it.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_HTTP_RESPONSE_CODE = 429
AXES_VERBOSE = False  # lockouts are still logged; routine attempt bookkeeping is not
# The client address is REMOTE_ADDR: behind a proxy, let the server set it from the proxy's header
# (uvicorn's --forwarded-allow-ips), or every client would share the proxy's address and its count.
LOGIN_REDIRECT_URL = "/chat/"
LOGOUT_REDIRECT_URL = "/library/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env.str("STATIC_ROOT", default=str(BASE_DIR / "staticfiles")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = DEBUG
if DEBUG:
    # WhiteNoise serves from the finders in development; no collectstatic needed.
    warnings.filterwarnings("ignore", message="No directory at", category=UserWarning)
MEDIA_URL = "media/"
MEDIA_ROOT = Path(env.str("MEDIA_ROOT", default=str(VAR_DIR / "media")))

# --- Content-Security-Policy (every mode, so development and the browser tests see it) ---------
# Scripts only from our own static files: the templates have no inline scripts or handlers.
# Inline styles stay allowed because the admin, the DRF browsable API and Swagger UI write them,
# and a style cannot run code.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "font-src": ["'self'"],
        "worker-src": ["'self'", "blob:"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

# --- Security (production) -----------------------------------------------------------------
# X-Forwarded-Proto is believed only when told to: anyone who reaches the app directly could send it.
# Set TRUST_X_FORWARDED_PROTO=1 only when the app listens where nothing but the reverse proxy can
# reach it (docker-compose binds web to 127.0.0.1) and the proxy overwrites the header.
TRUST_X_FORWARDED_PROTO = env.bool("TRUST_X_FORWARDED_PROTO", default=False)
if not DEBUG:
    if TRUST_X_FORWARDED_PROTO:
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_CONTENT_TYPE_NOSNIFF = True
    SECURE_REFERRER_POLICY = "same-origin"
    X_FRAME_OPTIONS = "DENY"
    CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]

# --- Redis, Celery --------------------------------------------------------------------------
REDIS_URL = env.str("REDIS_URL", default="")
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="")
# No broker configured: run tasks eagerly in-process so the product works with no services.
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = env.str("CELERY_RESULT_BACKEND", default=None) or None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Beat: chunks stored without a vector (an ingestion interrupted mid-way, Tablizer results saved while
# the embed task could not be queued) are embedded on a schedule rather than waiting for a rerun.
CELERY_BEAT_SCHEDULE = {
    "embed-missing-chunks": {
        "task": "pubmed.tasks.embed_missing_chunks_task",
        "schedule": env.float("EMBED_MISSING_CHUNKS_EVERY_SECONDS", default=600.0),
    },
    # PubMed retracts papers long after MedCite stored them: fetch the stalest stored records again.
    "refresh-stale-abstracts": {
        "task": "pubmed.tasks.refresh_stale_abstracts_task",
        "schedule": env.float("REFRESH_ABSTRACTS_EVERY_SECONDS", default=86400.0),
    },
    # An expired esearch answer is never used again (it is fetched afresh); the rows are deleted hourly.
    "purge-expired-esearch-cache": {
        "task": "pubmed.tasks.purge_expired_esearch_cache_task",
        "schedule": 3600.0,
    },
}
REFRESH_ABSTRACTS_AFTER_DAYS = env.int("REFRESH_ABSTRACTS_AFTER_DAYS", default=30)
REFRESH_ABSTRACTS_BATCH = env.int("REFRESH_ABSTRACTS_BATCH", default=1000)

CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}
        if REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "medcite"}
    )
}

# --- Django REST framework ------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # JSON nested past 64 levels is a 400, not the RecursionError (500) of DRF's own JSON parser.
    "DEFAULT_PARSER_CLASSES": [
        "config.parsers.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "config.api.StandardPagination",
    "PAGE_SIZE": 20,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "config.api.error_response_handler",
    "DEFAULT_THROTTLE_CLASSES": [
        "rest_framework.throttling.AnonRateThrottle",
        "rest_framework.throttling.UserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env.str("API_ANON_RATE", default="120/min"),
        "user": env.str("API_USER_RATE", default="600/min"),
    },
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "MedCite API",
    "DESCRIPTION": "Clinical evidence in which every claim carries a verifiable PMID, DOI or NCT reference.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Swagger UI and ReDoc assets are served from the installed sidecar package, never a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- Logging ----------------------------------------------------------------------------------
LOG_LEVEL = env.str("LOG_LEVEL", default="INFO")
LOG_FORMAT = env.str("LOG_FORMAT", default="json")
LOGGING = build_logging_config(level=LOG_LEVEL, fmt=LOG_FORMAT)
