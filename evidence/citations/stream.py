"""Make streamed model text safe to show before verification finishes."""

from __future__ import annotations

import re
from collections.abc import Callable

from evidence.citations.parse import CLOSE, OPEN, PLACEHOLDER, Placeholders, rewrite
from evidence.sources import EvidenceSet


class StreamScrubber:
    """Make streamed model text safe to show before verification finishes.

    Text is released a sentence at a time; identifiers that do not resolve against `evidence`
    are deleted and resolved ones shown as provisional numbers, so an unverified identifier never
    reaches the reader, even for a moment. The final, verified answer replaces the preview.
    """

    _RELEASE = re.compile(r"(?:[.!?]\s+|\n\n)")

    def __init__(self, evidence: EvidenceSet, *, screen: Callable[[str], str] | None = None) -> None:
        self.evidence = evidence
        # Leaves out of the preview what the final verification would remove (unsupported claims).
        self.screen = screen
        self.buffer = ""
        self.numbering: dict[str, int] = {}

    def _scrub(self, segment: str) -> str:
        if self.screen is not None:
            segment = self.screen(segment)
            if not segment:
                return ""
        placeholders = Placeholders()
        rewritten = rewrite(segment, self.evidence, placeholders, [])

        def number(match: re.Match[str]) -> str:
            doc_id = placeholders.sources[int(match.group(1))].doc_id
            return f"[{self.numbering.setdefault(doc_id, len(self.numbering) + 1)}]"

        rewritten = PLACEHOLDER.sub(number, rewritten)
        trailing = segment[len(segment.rstrip()) :]
        return rewritten.rstrip() + trailing

    def feed(self, delta: str) -> str:
        """Add streamed text; return the part that is complete and safe to show now."""
        self.buffer += delta.replace(OPEN, "").replace(CLOSE, "")
        ends = [match.end() for match in self._RELEASE.finditer(self.buffer)]
        if not ends:
            return ""
        ready, self.buffer = self.buffer[: ends[-1]], self.buffer[ends[-1] :]
        return self._scrub(ready)

    def flush(self) -> str:
        """Return whatever is left, scrubbed."""
        ready, self.buffer = self.buffer, ""
        return self._scrub(ready) if ready else ""
