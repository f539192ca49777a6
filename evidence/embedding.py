"""The sentence embedder of the evidence layer (claim checks, instruction screening), registered by the pubmed app.

Imports run one way (pubmed → evidence), so the pubmed app, which owns the embedding model, registers its embedder
here on start-up (`pubmed.apps`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from django.core.exceptions import ImproperlyConfigured

Embed = Callable[[Sequence[str]], np.ndarray]

_embedders: dict[str, Embed] = {}


def embedder_register(embed: Embed) -> None:
    """Make `embed` (texts → unit vectors) the evidence layer's sentence embedder."""
    _embedders["default"] = embed


def registered_embedder() -> Embed | None:
    """Return the registered embedder, or None before an installed app registered one."""
    return _embedders.get("default")


def embedder() -> Embed:
    """Return the registered embedder, or raise ImproperlyConfigured when no installed app provides one."""
    embed = registered_embedder()
    if embed is None:
        raise ImproperlyConfigured(
            "No sentence embedder is registered: the pubmed app registers one on start-up; add it to INSTALLED_APPS."
        )
    return embed
