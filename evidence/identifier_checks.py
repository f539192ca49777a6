"""Where the admin's "Verify identifiers against PubMed" action sends the studies it was given.

The library sits below the PubMed app (imports run research → chat → pubmed / trials → evidence),
so it cannot call the E-utilities client itself. The app that owns the client registers, from its
`AppConfig.ready()`, the function that queues a check; until one is registered the action is hidden.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

IdentifierCheckQueue = Callable[[Sequence[int]], None]

_queue: IdentifierCheckQueue | None = None


def identifier_checks_register(queue: IdentifierCheckQueue) -> None:
    """Make `queue(study_ids)` the function that queues PubMed checks of the given studies."""
    global _queue
    _queue = queue


def identifier_checks_queue() -> IdentifierCheckQueue | None:
    """Return the registered queueing function, or None when no installed app checks identifiers."""
    return _queue
