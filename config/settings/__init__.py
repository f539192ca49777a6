"""Settings for MedCite, read from the environment (see README "Configuration")."""

from config.settings.base import *  # noqa: F403
from config.settings.embeddings import *  # noqa: F403
from config.settings.llm import *  # noqa: F403
from config.settings.ncbi import *  # noqa: F403
from config.settings.scout import *  # noqa: F403
from config.settings.trials import *  # noqa: F403
