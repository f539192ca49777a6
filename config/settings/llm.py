"""Language-model provider settings.

With no key the product runs on the built-in extractive composer; asking for a provider that is
not configured fails at start-up with a message naming the missing variable.
"""

from django.core.exceptions import ImproperlyConfigured

from config.settings.environment import env

ANTHROPIC_API_KEY = env.str("ANTHROPIC_API_KEY", default="")
ANTHROPIC_BASE_URL = env.str("ANTHROPIC_BASE_URL", default="") or None
OPENAI_API_KEY = env.str("OPENAI_API_KEY", default="")
OPENAI_BASE_URL = env.str("OPENAI_BASE_URL", default="") or None

LLM_PROVIDER = env.str("LLM_PROVIDER", default="anthropic" if ANTHROPIC_API_KEY else "extractive")
LLM_MODEL = env.str(
    "LLM_MODEL",
    default={"anthropic": "claude-sonnet-4-5", "openai": "llama3.1"}.get(LLM_PROVIDER, ""),
)
LLM_TIMEOUT_SECONDS = env.float("LLM_TIMEOUT_SECONDS", default=60.0)
LLM_MAX_TOOL_ROUNDS = env.int("LLM_MAX_TOOL_ROUNDS", default=4)
LLM_MAX_TOKENS = env.int("LLM_MAX_TOKENS", default=2048)

if LLM_PROVIDER not in {"extractive", "anthropic", "openai"}:
    raise ImproperlyConfigured(f"LLM_PROVIDER must be one of extractive, anthropic, openai; got {LLM_PROVIDER!r}.")
if LLM_PROVIDER == "anthropic" and not ANTHROPIC_API_KEY:
    raise ImproperlyConfigured("LLM_PROVIDER=anthropic needs ANTHROPIC_API_KEY.")
if LLM_PROVIDER == "openai" and not OPENAI_BASE_URL:
    raise ImproperlyConfigured("LLM_PROVIDER=openai needs OPENAI_BASE_URL (e.g. http://127.0.0.1:11434/v1 for Ollama).")

# SDK retries on 429/5xx/529 and connection errors before a provider error is reported.
LLM_MAX_RETRIES = env.int("LLM_MAX_RETRIES", default=2)
# JSON object overriding fields of chat.answer_settings.AnswerSettings, e.g.
# ANSWER_SETTINGS='{"retrieval_k": 20, "judge_threshold": 0.5}'. Unknown keys are rejected.
ANSWER_SETTINGS = env.json("ANSWER_SETTINGS", default={})
if not isinstance(ANSWER_SETTINGS, dict):
    raise ImproperlyConfigured("ANSWER_SETTINGS must be a JSON object, e.g. '{\"retrieval_k\": 20}'.")
