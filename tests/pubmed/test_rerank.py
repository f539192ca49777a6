"""Rerank 20 → 5 without an LLM: a local cross-encoder when RERANKER_MODEL is set, else the lexical reranker."""

from __future__ import annotations

from pathlib import Path

import pytest

from pubmed.services.rerank import lexical_rerank, rerank_hits
from pubmed.services.search import ChunkHit

WORDS = ["gefitinib", "egfr", "lung", "cancer", "survival", "trial", "melanoma", "liver", "kidney", "placebo"]


def hit(pmid: str, title: str, text: str) -> ChunkHit:
    return ChunkHit(pmid=pmid, chunk_id="c0", doc_id=f"pmid:{pmid}", text=text, title=title, journal="", year=2020,
                    authors=[], doi="", pmcid="", publication_types=[], score=0.5)


HITS = [
    hit("1", "Liver transplantation outcomes", "kidney function after liver surgery"),
    hit("2", "Melanoma registry", "melanoma incidence in a registry"),
    hit("3", "Gefitinib in EGFR-mutant lung cancer", "gefitinib improved survival in a phase 3 trial"),
    hit("4", "Placebo response", "placebo response in trials"),
    hit("5", "Lung cancer screening", "screening for lung cancer"),
    hit("6", "Kidney cancer", "kidney cancer survival"),
]


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Write a tiny randomly initialised BERT cross-encoder (one label) to a local directory."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    directory = tmp_path_factory.mktemp("cross-encoder")
    vocab = directory / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    torch.manual_seed(7)
    config = BertConfig(vocab_size=len(WORDS) + 5, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=64, num_labels=1)
    BertForSequenceClassification(config).save_pretrained(directory)
    BertTokenizer(str(vocab)).save_pretrained(directory)
    return directory


def test_without_model_or_llm_the_lexical_reranker_runs() -> None:
    outcome = rerank_hits(query="gefitinib for EGFR lung cancer", hits=HITS, k=3)
    assert outcome.method == "lexical"
    assert [h.pmid for h in outcome.hits] == [h.pmid for h in lexical_rerank(query="gefitinib for EGFR lung cancer",
                                                                             hits=HITS, k=3)]
    assert outcome.hits[0].pmid == "3"
    assert len(outcome.hits) == 3


def test_a_local_cross_encoder_orders_by_its_own_scores(settings: object, tiny_cross_encoder: Path) -> None:
    from sentence_transformers import CrossEncoder

    settings.RERANKER_MODEL = str(tiny_cross_encoder)  # type: ignore[attr-defined]
    query = "gefitinib lung cancer survival"
    outcome = rerank_hits(query=query, hits=HITS, k=5)
    assert outcome.method == "cross-encoder"
    scores = CrossEncoder(str(tiny_cross_encoder), local_files_only=True).predict(
        [(query, f"{h.title} {h.text}") for h in HITS]
    )
    expected = [h.pmid for _, h in sorted(zip(scores, HITS, strict=True), key=lambda pair: -pair[0])][:5]
    assert [h.pmid for h in outcome.hits] == expected
    assert outcome.scores == pytest.approx({h.pmid: float(s) for h, s in zip(HITS, scores, strict=True)})


def test_an_unloadable_cross_encoder_falls_back_to_lexical_and_says_why(settings: object, tmp_path: Path) -> None:
    settings.RERANKER_MODEL = str(tmp_path)  # type: ignore[attr-defined]
    outcome = rerank_hits(query="gefitinib lung cancer", hits=HITS, k=2)
    assert outcome.method == "lexical"
    assert outcome.note.startswith("cross-encoder failed (")
    assert outcome.hits[0].pmid == "3"
