"""Read record files of any size as a stream: PubMed XML, MEDLINE text or JSONL, plain or gzip-compressed.

A PubMed baseline file (`pubmed25nNNNN.xml.gz`, ~30,000 records) is never held in memory: XML is read
with `iterparse` and each record's element is dropped once parsed, text formats line by line. Every
entry carries its position in the file (1-based, counting records and `DeleteCitation` elements) and
its line, so an error names the file, the record and the line.
"""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import IO, TypeVar, cast

from pubmed.parsers.jsonl import parse_jsonl_line
from pubmed.parsers.medline import medline_blocks, medline_record
from pubmed.parsers.pubmed_xml import iter_pubmed_xml
from pubmed.parsers.records import AbstractRecord, PubmedParseError, RecordEntry

GZIP_MAGIC = b"\x1f\x8b"
FORMATS = ("xml", "medline", "jsonl")

T = TypeVar("T")


def detect_format(path: Path, head: bytes) -> str:
    """Return 'xml', 'medline' or 'jsonl' for a file, from its first (decompressed) bytes; extension as tiebreak."""
    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if stripped.startswith(b"<"):
        return "xml"
    if stripped.startswith(b"{"):
        return "jsonl"
    if stripped.startswith(b"PMID-"):
        return "medline"
    suffix = Path(path.name.removesuffix(".gz")).suffix.lower()
    if suffix in {".xml"}:
        return "xml"
    if suffix in {".jsonl", ".ndjson", ".json"}:
        return "jsonl"
    if suffix in {".txt", ".medline", ".nbib"}:
        return "medline"
    raise PubmedParseError(
        f"{path}: cannot tell the format; expected PubMed XML (<PubmedArticleSet>), MEDLINE text "
        "('PMID- ' lines) or JSONL ({\"pmid\": ...} per line), plain or gzip-compressed."
    )


class RecordFile:
    """An open record file: its format, how many of its bytes on disk have been read, and its entries.

    Use as a context manager; `entries()` may be iterated once.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._raw: IO[bytes] = path.open("rb")
            self.size = path.stat().st_size
        except OSError as exc:
            raise PubmedParseError(f"{path}: cannot read ({exc.strerror}).") from exc
        self.compressed = self._raw.read(2) == GZIP_MAGIC
        self._raw.seek(0)
        self._last = RecordEntry(position=0, line=1)
        head = self._guarded(lambda: self._open_stream().read(64))
        self.kind = detect_format(path, head)
        self._raw.seek(0)
        self._stream = self._open_stream()

    def _open_stream(self) -> IO[bytes]:
        if self.compressed:
            return cast(IO[bytes], gzip.GzipFile(fileobj=self._raw, mode="rb"))
        return self._raw

    def __enter__(self) -> RecordFile:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        self._stream.close()
        self._raw.close()

    def bytes_read(self) -> int:
        """Return how many bytes of the file on disk (compressed, when it is) have been read so far."""
        return self.size if self._raw.closed else self._raw.tell()

    def entries(self) -> Iterator[RecordEntry]:
        """Yield the file's records and deletions in file order; raise PubmedParseError naming file and record."""
        if self.kind == "xml":
            source: Iterator[RecordEntry] = iter_pubmed_xml(self._stream)
        else:
            source = self._text_entries()
        while (entry := self._guarded(lambda: next(source, None))) is not None:
            self._last = entry
            yield entry

    def _text_entries(self) -> Iterator[RecordEntry]:
        text = io.TextIOWrapper(self._stream, encoding="utf-8-sig")
        lines = _numbered_lines(text)
        if self.kind == "jsonl":
            blocks: Iterator[tuple[int, list[str]]] = ((number, [line]) for number, line in lines if line.strip())
        else:
            blocks = medline_blocks(lines)
        position = 0
        for number, block in blocks:
            position += 1
            try:
                if self.kind == "jsonl":
                    record = parse_jsonl_line(block[0], line_number=number)
                else:
                    record = medline_record(block)
            except PubmedParseError as exc:
                problem = str(exc).removeprefix(f"Line {number}: ")
                raise PubmedParseError(f"record {position:,} (line {number:,}): {problem}") from exc
            yield RecordEntry(position=position, line=number, record=record)
        if not position:
            raise PubmedParseError(
                "no JSONL records found." if self.kind == "jsonl"
                else "no MEDLINE records found (each record starts with a 'PMID- ' line)."
            )

    def _after_last(self) -> str:
        last = self._last
        if not last.position:
            return "before the first record"
        pmid = f", PMID {last.record.pmid}" if last.record else ""
        return f"after record {last.position:,} (line {last.line:,}{pmid})"

    def _guarded(self, read: Callable[[], T]) -> T:
        """Call `read`, turning decompression, decoding and syntax failures into errors naming the file and record."""
        try:
            return read()
        except EOFError as exc:
            raise PubmedParseError(
                f"{self.path}: the gzip data ends early, {self._after_last()}: the file is truncated; "
                "download it again."
            ) from exc
        except (gzip.BadGzipFile, zlib.error) as exc:
            raise PubmedParseError(
                f"{self.path}: corrupt gzip data {self._after_last()} ({exc}); download it again."
            ) from exc
        except UnicodeDecodeError as exc:
            raise PubmedParseError(f"{self.path}: not UTF-8 text {self._after_last()} ({exc.reason}).") from exc
        except PubmedParseError as exc:
            raise PubmedParseError(f"{self.path}: {exc}") from exc


def _numbered_lines(text: IO[str]) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(text, start=1):
        if "\x00" in line:
            raise PubmedParseError(f"line {number:,} contains a NUL byte, which cannot be stored; remove it.")
        yield number, line.rstrip("\r\n")


def parse_file(path: Path) -> list[AbstractRecord]:
    """Parse a whole PubMed XML, MEDLINE text or JSONL file (plain or gzip) into records, naming the file in any error.

    For small files; `RecordFile` streams files of any size.
    """
    with RecordFile(path) as opened:
        return [entry.record for entry in opened.entries() if entry.record is not None]
