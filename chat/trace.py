"""The one trace builder: the steps of one reply (chat answer or tray reply), each timed since the previous one."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Trace:
    """The steps of one reply, each with how long it took since the previous one."""

    steps: list[dict[str, Any]] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)
    mark: float = 0.0

    def __post_init__(self) -> None:
        self.mark = self.mark or self.started

    def add(self, step: str, label: str, detail: str, **data: Any) -> None:
        """Record a finished step with its duration and structured data."""
        self.record(step, label, detail, data)

    def record(self, step: str, label: str, detail: str, data: dict[str, Any], *, summary: str = "") -> None:
        """Record a finished step; `summary` is the reader's sentence (`chat.pipeline.trace_words`), shown with
        `label: detail` folded under it."""
        now = time.monotonic()
        entry: dict[str, Any] = {"step": step, "label": label}
        if summary:
            entry["summary"] = summary
        entry.update(detail=detail, duration_ms=int((now - self.mark) * 1000), data=data)
        self.steps.append(entry)
        self.mark = now
