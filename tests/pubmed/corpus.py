"""A fake NCBI E-utilities over a corpus of real abstracts: esearch evaluates MedCite's queries, efetch serves XML.

The corpus is the real recorded efetch articles plus the 1,000 PubMedQA abstracts (real PubMed text,
its first sentence standing in as the title, as the answer benchmarks store them) written out as
PubmedArticle XML. esearch evaluates the queries `pubmed.query.build_query` writes: clauses ANDed,
terms ORed, `"phrase"[Title/Abstract]`, `[MeSH Terms]` and `[Publication Type]`, case-insensitively.
Used by the Evidence Scout tests and by benchmarks/scout.py.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import parse_qs

from lxml import etree
from werkzeug import Request, Response

from pubmed.parsers import AbstractRecord, parse_pubmed_xml

XML_HEADER = b'<?xml version="1.0" ?>\n'
_CLAUSE = re.compile(r'"([^"]+)"\[([^\]]+)\]')


def pubmedqa_records(path: Path) -> list[AbstractRecord]:
    """Return PubMedQA's abstracts as records; each abstract's first sentence is its title."""
    from evidence.sentences import split_sentences
    from pubmed.pubmedqa import pubmedqa_records as load

    records, _ = load(path)
    return [replace(r, title=(split_sentences(r.sections[0].text) or [""])[0][:300]) for r in records]


def article_xml(record: AbstractRecord) -> bytes:
    """Write one record as a PubmedArticle element (what efetch returns for it)."""
    article = etree.Element("PubmedArticle")
    citation = etree.SubElement(article, "MedlineCitation", Status="MEDLINE", Owner="NLM")
    etree.SubElement(citation, "PMID", Version="1").text = record.pmid
    body = etree.SubElement(citation, "Article", PubModel="Print")
    journal = etree.SubElement(body, "Journal")
    issue = etree.SubElement(journal, "JournalIssue", CitedMedium="Print")
    date = etree.SubElement(issue, "PubDate")
    if record.year:
        etree.SubElement(date, "Year").text = str(record.year)
    etree.SubElement(journal, "ISOAbbreviation").text = record.journal or "PubMedQA"
    etree.SubElement(body, "ArticleTitle").text = record.title
    abstract = etree.SubElement(body, "Abstract")
    for section in record.sections:
        node = etree.SubElement(abstract, "AbstractText", **({"Label": section.label} if section.label else {}))
        node.text = section.text
    types = etree.SubElement(body, "PublicationTypeList")
    for kind in record.publication_types or ["Journal Article"]:
        etree.SubElement(types, "PublicationType").text = kind
    if record.mesh_terms:
        mesh = etree.SubElement(citation, "MeshHeadingList")
        for term in record.mesh_terms:
            heading = etree.SubElement(mesh, "MeshHeading")
            etree.SubElement(heading, "DescriptorName", MajorTopicYN="N").text = term
    return etree.tostring(article)


def _split_top(text: str, separator: str) -> list[str]:
    """Split `text` on `separator` outside quotes and parentheses."""
    parts, depth, quoted, start = [], 0, False, 0
    index = 0
    while index < len(text):
        char = text[index]
        if char == '"':
            quoted = not quoted
        elif not quoted and char == "(":
            depth += 1
        elif not quoted and char == ")":
            depth -= 1
        elif not quoted and depth == 0 and text.startswith(separator, index):
            parts.append(text[start:index])
            index += len(separator)
            start = index
            continue
        index += 1
    parts.append(text[start:])
    return [part.strip() for part in parts if part.strip()]


@dataclass
class Corpus:
    """Records indexed for the fake esearch."""

    records: dict[str, AbstractRecord]
    articles: dict[str, bytes] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.text = {pmid: f"{r.title} {r.abstract}".lower() for pmid, r in self.records.items()}
        self.mesh = {pmid: {m.lower() for m in r.mesh_terms} for pmid, r in self.records.items()}
        self.types = {pmid: {t.lower() for t in r.publication_types} for pmid, r in self.records.items()}
        self.articles = {pmid: article_xml(r) for pmid, r in self.records.items()}

    @classmethod
    def build(cls, *, efetch_files: Iterable[Path], pubmedqa: Path | None) -> Corpus:
        records: dict[str, AbstractRecord] = {}
        for path in efetch_files:
            for record in parse_pubmed_xml(path.read_bytes()):
                records.setdefault(record.pmid, record)
        for record in pubmedqa_records(pubmedqa) if pubmedqa else []:
            records.setdefault(record.pmid, record)
        return cls(records=records)

    def _clause(self, pmid: str, phrase: str, tag: str) -> bool:
        phrase = phrase.lower().rstrip("*")
        if tag == "MeSH Terms":
            return phrase in self.mesh[pmid]
        if tag == "Publication Type":
            return phrase in self.types[pmid]
        return re.search(r"(?<![a-z0-9])" + re.escape(phrase), self.text[pmid]) is not None

    def _group(self, pmid: str, group: str) -> bool:
        inner = group[1:-1] if group.startswith("(") and group.endswith(")") else group
        clauses = [_CLAUSE.fullmatch(part) for part in _split_top(inner, " OR ")]
        if any(clause is None for clause in clauses):  # free text: every word must appear
            return all(word in self.text[pmid] for word in re.findall(r"[a-z0-9]+", inner.lower()))
        return any(self._clause(pmid, c.group(1), c.group(2)) for c in clauses if c is not None)

    def search(self, term: str) -> list[str]:
        """Return the PMIDs matching `term`, newest PMID first (as PubMed's default order roughly is)."""
        groups = _split_top(term, " AND ")
        found = [pmid for pmid in self.records if all(self._group(pmid, g) for g in groups)]
        return sorted(found, key=int, reverse=True)


@dataclass
class CorpusEutils:
    """esearch and efetch handlers over a Corpus, logging every request with its arrival time."""

    corpus: Corpus
    seen: list[tuple[float, str, dict[str, str]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    fail_efetch: int = 0  # answer this many efetch requests with HTTP 500 first

    def _params(self, request: Request) -> dict[str, str]:
        params = dict(request.args.items())
        if request.method == "POST":
            params.update({k: v[-1] for k, v in parse_qs(request.get_data(as_text=True)).items()})
        with self.lock:
            self.seen.append((time.time(), request.path.rsplit("/", 1)[-1], params))
        return params

    def requests(self, endpoint: str) -> list[dict[str, str]]:
        return [params for _, path, params in self.seen if path == endpoint]

    def esearch(self, request: Request) -> Response:
        params = self._params(request)
        ids = self.corpus.search(params.get("term", ""))
        start, size = int(params.get("retstart", 0)), int(params.get("retmax", 20))
        result = {"count": str(len(ids)), "retmax": str(len(ids[start:start + size])), "retstart": str(start),
                  "idlist": ids[start:start + size], "translationset": [], "querytranslation": params.get("term", "")}
        return Response(json.dumps({"header": {"type": "esearch", "version": "0.3"}, "esearchresult": result}),
                        content_type="application/json")

    def efetch(self, request: Request) -> Response:
        params = self._params(request)
        with self.lock:
            if self.fail_efetch > 0:
                self.fail_efetch -= 1
                return Response("Internal server error", status=500)
        ids = [pmid for pmid in params.get("id", "").split(",") if pmid]
        body = b"\n".join(self.corpus.articles[pmid] for pmid in ids if pmid in self.corpus.articles)
        return Response(XML_HEADER + b"<PubmedArticleSet>\n" + body + b"\n</PubmedArticleSet>\n",
                        content_type="text/xml; charset=UTF-8")

    def serve(self, server: object, prefix: str = "") -> CorpusEutils:
        server.expect_request(f"{prefix}/esearch.fcgi").respond_with_handler(self.esearch)  # type: ignore[attr-defined]
        server.expect_request(f"{prefix}/efetch.fcgi").respond_with_handler(self.efetch)  # type: ignore[attr-defined]
        return self
