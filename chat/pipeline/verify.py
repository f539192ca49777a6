"""Step 7, verify: every identifier and named study in the answer must come from this turn's evidence
or the library (else removed and logged); repair when the writer cited nothing; rate confidence."""

from __future__ import annotations

import re

from chat.pipeline.state import AnswerRun, TraceStep
from chat.prompts import ABSTENTION_NO_EVIDENCE, PROVIDER_FAILURE_MESSAGE
from evidence.asks import ASK_WORDS, answers
from evidence.citations.verify import VerifiedAnswer, verify_answer
from evidence.clinical_question import reads_clinical
from evidence.concepts import CONDITION, DECISION_ROLE, POPULATION, TOPIC, joined_phrases
from evidence.confidence import RED, SourceVerdict, rate_confidence
from evidence.models import StudyKind
from evidence.patient import stated_for_others
from evidence.question_parts import unanswered_parts
from evidence.text import is_disease

# Below this similarity to anything stored, a question without a clinical term is not clinical.
NOT_CLINICAL_SIMILARITY = 0.3


def verify(run: AnswerRun) -> TraceStep:
    """Verify the generated answer's citations into `run.verified` (an abstention when nothing was written)."""
    assert run.evidence is not None
    generation = run.generation
    if generation is None:
        assert run.error is not None
        run.verified = VerifiedAnswer(
            text=PROVIDER_FAILURE_MESSAGE.format(reason=run.error.message.rstrip(".")),
            citations=[],
            references=[],
            confidence=RED,
            density=0.0,
            sentences=0,
            cited_sentences=0,
            removed=[],
            flags=[],
            was_repaired=False,
            abstained=True,
        )
    else:
        run.verified = verify_answer(
            text=generation.text,
            evidence=run.evidence,
            intent=run.intent,
            # The composer abstaining is a judgement on the evidence, not a missing citation to repair;
            # and an answer whose every statement failed the support check has nothing left to repair.
            repair_max_sources=0
            if generation.details.get("abstained") or not any(record.supported for record in run.claims)
            else run.settings.repair_max_sources,
            abstention=ABSTENTION_NO_EVIDENCE,
        )
    verified = run.verified
    if verified.abstained and run.generation is not None:
        run.abstention = abstention(run)
        verified.text = run.abstention["message"]
    return TraceStep(
        "verify",
        "Verified every citation",
        f"{len(verified.references)} source(s) cited and verified; "
        f"{len(verified.removed)} unverifiable identifier(s) removed; "
        f"{verified.named_studies_attached} named study mention(s) given a verified identifier; "
        f"{'repaired by attaching the top sources' if verified.was_repaired else 'no repair needed'}"
        + ("; abstained" if verified.abstained else ""),
        {
            "removed": verified.removed,
            "flags": verified.flags,
            "named_studies_attached": verified.named_studies_attached,
            "was_repaired": verified.was_repaired,
            "abstained": verified.abstained,
        },
    )


def confidence(run: AnswerRun) -> TraceStep:
    """Rate the verified answer: relevance of what it cites, then the citation-format floor."""
    verified = run.verified
    assert verified is not None
    cited = [
        SourceVerdict(
            doc_id=doc_id,
            title=judgement.title if judgement else doc_id,
            addresses=bool(judgement and judgement.addresses),
            direct=bool(judgement and judgement.direct),
            synthesis=bool(judgement and judgement.synthesis),
            missing=tuple(_spelled(run, gap) for gap in judgement.gaps) if judgement else (),  # "PCN (penicillin)"
        )
        for doc_id in dict.fromkeys(verified.cited_doc_ids)
        for judgement in [run.judgements.get(doc_id)]
    ]
    shown = [record for record in run.claims if record.supported]
    # A study's name in the composer's label ("... anticoagulants and antiplatelets in acute GI bleeding") is
    # not what the sentence is about.
    sources = run.evidence.sources if run.evidence else []
    stated_sentences, findings = [], []
    by_doc = {source.doc_id: source for source in sources}
    for record in shown:
        text = record.text
        for source in sources:
            text = source.without_label(text)
        stated_sentences.append(text)
        # Each with whom its study enrolled, where the sentence does not say (`evidence.patient.fitted`); a
        # protocol's design is no finding for any patient, as the composer does not lead with one.
        study = next((by_doc[doc_id] for doc_id in record.doc_ids if doc_id in by_doc), None)
        if not (study and study.kind == StudyKind.PROTOCOL):
            findings.append((text, study.title if study else ""))
    unstated = [
        ASK_WORDS[kind]
        for kind in run.asks
        if not any(answers(kind, sentence, run.concepts) for sentence in stated_sentences)
    ]
    # The drug or procedure the question names that no shown finding speaks to (`unanswered_parts`).
    named = [*(run.evidence.library if run.evidence else []), *sources]
    unanswered = unanswered_parts(run.parts, stated_sentences, sources=named)
    rated = rate_confidence(
        cited=cited,
        format_floor=verified.confidence,
        abstained=verified.abstained,
        claims_shown=len(shown),
        claims_removed=sum(1 for removal in run.claims_removed if removal["kind"] == "claim"),
        unstated=unstated,
        unanswered=unanswered,
        other_patients=stated_for_others(run.patient, findings),
    )
    run.confidence, run.confidence_reasons = rated.level, rated.reasons
    return TraceStep(
        "confidence",
        "Rated confidence",
        f"{rated.level}: {'; '.join(rated.reasons)}. Citation format: {verified.cited_sentences} of "
        f"{verified.sentences} sentences cited (density {verified.density:.2f}), floor {verified.confidence}",
        {
            "confidence": rated.level,
            "reasons": rated.reasons,
            "format_floor": verified.confidence,
            "density": verified.density,
            "sentences": verified.sentences,
            "cited_sentences": verified.cited_sentences,
        },
    )


def _spelled(run: AnswerRun, label: str) -> str:
    expansions = run.lexicon.wording.get(label) or run.lexicon.wording.get(label.lower()) or ()
    return f"{label} ({expansions[0]})" if expansions and expansions[0].lower() != label.lower() else label


def _names_care(run: AnswerRun) -> bool:
    """Whether the question names a drug, a procedure or a disease, even one the vocabulary does not know
    ("statin for primary prevention in an 80 year old?" is a clinical question the library cannot answer)."""
    return any(c.role == TOPIC and (c.names_intervention() or is_disease(c.label)) for c in run.concepts)


def abstention(run: AnswerRun) -> dict[str, str]:
    """Return why the answer abstains - in words, as a code, and the PubMed query to try - for an abstained run."""
    query = run.live.get("query", "") if run.live else ""
    query = query or run.question
    parts = run.parts.of_case  # a case is not missing its details
    # "Nothing stored here addresses" names what no source found covers (a stored CKD guideline addresses CKD).
    unaddressed = [c for c in parts if all(c.label in j.missing for j in run.judgements.values())]
    concepts = [c.label for c in run.concepts if c.role in (CONDITION, DECISION_ROLE)]
    topics = [c.label for c in joined_phrases(run.question, [c for c in parts if c.role == TOPIC])]
    named = list(dict.fromkeys([*concepts, *topics]))
    missing = [c.label for c in unaddressed if c.role in (CONDITION, DECISION_ROLE)]
    # The rarest words first ("MTX" before "add"); shorthand with its meaning ("MS (mitral stenosis)"). A word no
    # source covers is named with the words it is written with: "mechanical mitral valve", not "mitral".
    uncovered = [c.label.lower() for c in unaddressed if c.role == TOPIC]
    joined = [
        phrase
        for phrase in joined_phrases(run.question, [c for c in parts if c.role == TOPIC])
        if any(re.search(rf"(?<!\w){re.escape(word)}(?!\w)", phrase.label.lower()) for word in uncovered)
    ]
    # An abbreviation read in its sense ("MS (mitral stenosis)") names a clinical term: it comes before plain words,
    # whose order follows their rarity in the store (where "ms" is also milliseconds).
    ordered = sorted(joined, key=lambda c: (sum(ch.isupper() for ch in c.label) < 2, -c.weight))
    missing += [_spelled(run, c.label) for c in ordered]
    missing += [c.label for c in unaddressed if c.role == POPULATION]  # who the patients are comes last
    topic = _listed((missing or named)[:3]) or "this question"
    best = max((j.semantic for j in run.judgements.values()), default=0.0)
    live = run.live or {}
    if run.claims_removed and not any(record.supported for record in run.claims):
        code = "claims_unsupported"
        message = (
            "The answer that was written could not be shown: none of its statements is supported by the "
            "sources it cites, so every one was removed. Nothing here is guesswork; try asking again or "
            "search PubMed directly."
        )
    elif (
        not concepts
        and not _names_care(run)
        and not run.search_text.endswith(")")
        and best < NOT_CLINICAL_SIMILARITY
        and not reads_clinical(run.question)  # "tamsulosin for ureteric stones?": words no list knows, still clinical
    ):
        code = "not_clinical"
        message = (
            "This does not look like a clinical question, so there is no evidence to cite. Ask about a "
            "condition, a test or a treatment - for example which drug, what dose or how long."
        )
    elif not named:
        # "What dose?", "Is it safe?": nothing in the question says what it is about.
        code = "no_topic"
        message = (
            "The question does not name a condition, a test or a treatment, so there is nothing to search "
            "for and no evidence to cite. Ask it again with the condition and the treatment you mean - for "
            "example 'What dose of apixaban in atrial fibrillation with kidney failure?'."
        )
    elif live.get("error") or live.get("errors") or (live and not live.get("ran")):
        code = "live_search_failed"
        message = (
            f"Nothing stored here addresses {topic}, and the live PubMed search could not run "
            f"({'PubMed could not be reached' if live.get('ran') else live.get('reason', 'it was unavailable')}), "
            "so only the curated library and the stored abstracts were checked"
            + (f". Nearest in the store, set aside: {'; '.join(closest)}" if (closest := _closest(run)) else "")
            + ". Try again in a few minutes, or search PubMed in Tablizer."
        )
    else:
        code = "nothing_stored"
        closest = _closest(run)
        message = (
            f"Neither the curated library nor the stored PubMed abstracts address {topic} closely enough to cite"
            + (f"; the closest were {'; '.join(closest)}" if closest else "")
            + (". A live PubMed search found nothing new to add" if live.get("ran") and not live.get("new") else "")
            + ". Search PubMed in Tablizer to look further, or rephrase with the condition, the treatment and the "
            "outcome you care about."
        )
    return {"reason": code, "message": message, "tablizer_query": query}


def _closest(run: AnswerRun, limit: int = 2) -> list[str]:
    """Return the sources judged nearest to the question that were set aside, each with why in plain words
    (the score and threshold stay in the trace's details); one that shares none of the question's terms is not
    near it (a valve-surgery abstract for "sotatercept in PAH?"), whatever its similarity."""
    aside = sorted((j for j in run.judgements.values() if not j.addresses and j.coverage > 0),
                   key=lambda j: j.score, reverse=True)
    return [f"{j.title} ({j.why or j.reason})" for j in aside[:limit]]


def _listed(labels: list[str]) -> str:
    """Return the labels as an English list ("a, b and c"); "" for none."""
    if not labels:
        return ""
    return labels[0] if len(labels) <= 1 else ", ".join(labels[:-1]) + " and " + labels[-1]
