"""The extractive composer: an answer assembled from admitted evidence, with no language model.

Bottom line first: the result or conclusion sentence of the most relevant source that best
answers the question - and when the question asks for a drug, a dose, a duration or a threshold,
the first sentence states it if, and only if, a cited source does; otherwise the answer says
plainly which of those the evidence does not state. The supporting findings follow, each with its
citation; background and methods sentences are never offered as findings. "What the evidence does
not cover" names the question's concepts that no cited source addresses, in clinical words, and
is left out when nothing is missing. Every sentence comes from a source, so every citation is
real by construction; the verifier still checks them like any other answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from chat.answer_settings import AnswerSettings
from chat.prompts import ABSTENTION_NO_EVIDENCE
from evidence import asks as asking
from evidence import care_settings, language
from evidence.abstract_sections import abstract_sentences
from evidence.asks import ASK_WORDS, ASKS, answers, asked_first, asked_for, on_decisions, states, states_time_point
from evidence.concepts import DECISION_ROLE, POPULATION, Concept, TextIndex
from evidence.findings import CuratedFinding, decisions_tagged
from evidence.injection import addresses_reader
from evidence.kidney_function import fits, question_range
from evidence.models import StudyKind
from evidence.patient import PatientDetails, fitted, patient_details
from evidence.question_parts import QuestionParts, question_parts, unanswered_parts
from evidence.sentences import split_sentences
from evidence.sources import ORIGIN_LIBRARY, ORIGIN_RETRIEVED, EvidenceSet, EvidenceSource
from evidence.text import DRUG_NAME, stems, tokens
from pubmed.models import chunk_id_for

_NUMBER = re.compile(r"\d")
CURATED_FINDING = "curated finding"
SECTION_BONUS = ((CURATED_FINDING, 0.35), ("conclusion", 0.35), ("interpretation", 0.35), ("result", 0.25),
                 ("finding", 0.25), ("key_finding", 0.3))
# Sections whose sentences describe why and how a study was done: never offered as findings.
NON_FINDING_SECTIONS = (
    "background", "introduction", "objective", "purpose", "aim", "importance", "method", "design", "setting",
    "participant", "patients", "context", "hypothesis",
)
# Sentences that describe the study rather than what it found, in abstracts without labels.
_METHOD_SENTENCE = re.compile(
    r"\b(?:we (?:conducted|performed|analy[sz]ed|reviewed|enrolled|included|studied|examined|investigated|"
    r"assessed|evaluated|designed|compared|searched|aimed|sought|hypothesi[sz]ed)|this (?:study|trial|review) "
    r"(?:aimed|was designed|examined|investigated|evaluated)|the (?:aim|objective|purpose) of|were (?:enrolled|"
    r"randomi[sz]ed|recruited|included|divided|allocated|retrospectively)|was (?:performed|conducted) (?:in|on|at)|"
    r"data were (?:collected|obtained|extracted))\b",
    re.IGNORECASE,
)
MIN_WORDS, MAX_WORDS = 6, 70
WORDING_BONUS = 0.2
DECISION_BONUS = 0.15
PATIENT_FIT = 0.25  # a finding stated for the patient's kidney function, episode, disease stage or care setting
LEAD_MARGIN = 0.5  # a lower-ranked source's sentence leads when it scores this much more than the top source's best


@dataclass(frozen=True)
class Candidate:
    """An evidence sentence that could go into the answer."""

    sentence: str
    source: EvidenceSource
    section: str
    score: float
    words: frozenset[str]
    rank: int = 0
    # Stated only for other patients than the question's (another stage, episode length or care setting): context.
    misfit: bool = False

    @property
    def is_conclusion(self) -> bool:
        return any(key in self.section for key in ("conclusion", "interpretation"))


def _marker(source: EvidenceSource) -> str:
    return f"[citation:{source.doc_id}:{source.chunk_id}]"


def _with_citation(sentence: str, source: EvidenceSource) -> str:
    sentence = sentence.strip()
    match = re.search(r"[.!?]+$", sentence)
    if match:
        return f"{sentence[: match.start()]} {_marker(source)}{match.group(0)}"
    return f"{sentence} {_marker(source)}."


def is_finding(sentence: str, section: str) -> bool:
    """Return False for sentences that say why or how a study was done rather than what it found,
    and for sentences that speak to their reader or to an assistant rather than report anything."""
    if section == CURATED_FINDING:
        # A curator wrote it as a finding, with its design ("250 ... were randomised 2:1") for context, and checked
        # it against its public source; a guideline's wording ("Give an SGLT2 inhibitor ...") reads to the
        # instruction detector like a directive, so it is not screened (evidence.sources keeps it in the text too).
        return True
    if addresses_reader(sentence):
        return False
    # A combined label ("METHODS AND RESULTS", "MEASUREMENTS AND MAIN RESULTS") holds findings too:
    # there the sentence itself decides.
    reports_findings = any(key in section for key, _ in SECTION_BONUS)
    if not reports_findings and any(key in section for key in NON_FINDING_SECTIONS):
        return False
    return not _METHOD_SENTENCE.search(sentence)


def _section_bonus(section: str) -> float:
    return next((bonus for key, bonus in SECTION_BONUS if key in section), 0.0)


def score_sentence(
    *, sentence: str, section: str, question_terms: Sequence[str], weights: dict[str, float],
    concepts: Sequence[Concept] = (),
) -> float:
    """Return how well a finding answers the question: concept (or term) coverage plus section and length terms.
    Background and methods sentences score 0: they are never findings."""
    if not is_finding(sentence, section):
        return 0.0
    wording = 0.0
    if concepts:
        index = TextIndex(sentence)
        total = sum(concept.weight for concept in concepts)
        coverage = sum(concept.weight for concept in concepts if index.covers(concept)) / total if total else 0.0
        if question_terms and coverage:
            # Among sentences covering the same concepts, the one in the question's own words (the drugs it
            # names, "warfarin", "dose") answers it more directly.
            present = stems(sentence)
            wording = WORDING_BONUS * sum(term in present for term in question_terms) / len(question_terms)
    elif question_terms:
        present = stems(sentence)
        total = sum(weights.get(term, 1.0) for term in question_terms)
        coverage = sum(weights.get(term, 1.0) for term in question_terms if term in present) / total
    else:
        return 0.0
    if coverage == 0:
        # The source was judged to address the question as a whole; its results and conclusions may
        # still use its own abbreviations ("HBO" for hyperbaric oxygen), so they stay candidates.
        bonus = _section_bonus(section)
        return round(0.05 + bonus, 4) if bonus > 0 else 0.0
    words = len(sentence.split())
    score = coverage + wording + _section_bonus(section)
    if _NUMBER.search(sentence):
        score += 0.1
    if words < MIN_WORDS:
        score -= 0.3
    elif words > MAX_WORDS:
        score -= 0.15
    return round(score, 4)


def _content_words(text: str) -> frozenset[str]:
    not_topic = language.words(*language.NOT_TOPIC)  # once per sentence, not once per word
    return frozenset(stems(" ".join(t for t in tokens(text) if t not in not_topic)))


def _jaccard(left: frozenset[str], right: frozenset[str]) -> float:
    if not left or not right:
        return 0.0
    return len(left & right) / len(left | right)


def _candidates(
    sources: Sequence[EvidenceSource],
    *,
    question_terms: Sequence[str],
    weights: dict[str, float],
    concepts: Sequence[Concept],
    decisions: frozenset[str] = frozenset(),
    asks: frozenset[str] = frozenset(),
    patient: PatientDetails,
) -> list[Candidate]:
    kidney = patient.kidney
    rank: dict[str, int] = {}
    for source in sources:
        rank.setdefault(source.doc_id, len(rank))
    found = []
    for source in sources:
        decided: dict[str, int] = {}
        narrower = {f.shown: False for f in source.findings if f.narrower_population}  # context: see below
        if source.origin == ORIGIN_LIBRARY and source.findings:
            # A study with curated findings is quoted by them; its description only helps find it.
            sentences = [(CURATED_FINDING, f.shown) for f in source.findings if not f.other_population]
            # A finding counts the question's decisions among its tags, and the tags asking for what it asks.
            decided = {f.shown: _decided(f, decisions, asks) for f in source.findings}
        elif source.origin == ORIGIN_LIBRARY:
            sentences = [("key_finding", s) for s in split_sentences(" ".join(source.text.split())) if s]
        else:
            first = source.chunk_id == chunk_id_for(0)
            sentences = abstract_sentences(source.text, section=source.section, first_chunk=first)
        for section, sentence in sentences:
            score = score_sentence(
                sentence=sentence, section=section, question_terms=question_terms, weights=weights, concepts=concepts
            )
            if score <= 0:
                continue
            # The most relevant sources speak first: a small bonus by judged rank.
            score += max(0.0, 0.2 - 0.05 * rank[source.doc_id])
            # Of a guideline's recommendations, the ones on the decisions the question asks about ("DOAC or
            # warfarin?" is a drug choice: not the recommendation on anticoagulating device-detected AF).
            score += DECISION_BONUS * min(decided.get(sentence, 0), 2)
            # A dose row for the patient's kidney function ("CrCl 15-30" for eGFR 22); a sentence stated only for
            # other kidney function is about other patients and is not offered.
            if (fit := fits(kidney, sentence)) is False:
                continue
            if fit:
                score += PATIENT_FIT
            # A sentence stated for episodes as long as the patient's ("< 5 min" for 3-min AHRE) fits; one for others
            # only (longer episodes, stage, setting, score; subclinical AF for AF) is a misfit, whatever else it fits.
            fits_patient = (*fitted(patient, sentence, source.title), narrower.get(sentence))
            misfits = fits_patient.count(False)
            score += -PATIENT_FIT * misfits if misfits else PATIENT_FIT * fits_patient.count(True)
            found.append(Candidate(sentence, source, section, round(score, 4), _content_words(sentence),
                                   rank[source.doc_id], misfit=misfits > 0))
    return found


def _decided(finding: CuratedFinding, decisions: frozenset[str], asks: frozenset[str]) -> int:
    kinds = dict(zip(finding.decision_tags, finding.answer_kinds, strict=False))
    return sum(1 for tag in set(finding.decision_tags) if tag in decisions or kinds.get(tag, "") in asks)


def _select(candidates: list[Candidate], *, taken: list[frozenset[str]], settings: AnswerSettings) -> list[Candidate]:
    chosen: list[Candidate] = []
    per_source: dict[str, int] = {}
    for candidate in sorted(candidates, key=lambda item: (-item.score, item.source.doc_id, item.sentence)):
        if len(chosen) >= settings.composer_sentences:
            break
        limit = 1 if candidate.source.origin == ORIGIN_LIBRARY else settings.composer_sentences_per_source
        if per_source.get(candidate.source.doc_id, 0) >= limit:
            continue
        if any(_jaccard(candidate.words, other) >= settings.composer_redundancy for other in taken):
            continue
        chosen.append(candidate)
        taken.append(candidate.words)
        per_source[candidate.source.doc_id] = per_source.get(candidate.source.doc_id, 0) + 1
    return chosen


def _bottom_line(
    candidates: list[Candidate], asks: list[str], concepts: Sequence[Concept] = (),
    points: Sequence[tuple[int, str]] = (),
) -> tuple[Candidate | None, list[str]]:
    """Return the sentence to lead with and what the question asked for that no admitted sentence states; one
    reporting a result at the follow-up time the question names ("still holds at 5 yrs?") leads first."""
    if not candidates:
        return None, asks
    # A trial protocol reports no outcome, and a finding stated only for other patients (stage II for a stage III
    # patient) is context: neither leads while anything else was found.
    candidates = [c for c in candidates if c.source.kind != StudyKind.PROTOCOL] or candidates
    candidates = [c for c in candidates if not c.misfit] or candidates
    unstated = [kind for kind in asks if not any(answers(kind, c.sentence, concepts) for c in candidates)]
    stated = [kind for kind in asks if kind not in unstated]
    timed = [c for c in candidates if any(states_time_point(point, c.sentence) for point in points)]
    for pool in (timed, candidates) if stated else ():
        # Lead with the best sentence that states what was asked for (all of it, if one does).
        stating = [c for c in pool if any(answers(kind, c.sentence, concepts) for kind in stated)]
        if stating:
            return max(stating, key=lambda c: _lead_order(c, stated, concepts)), unstated
    # The most relevant source speaks first: its best result or conclusion leads, unless another source's answers
    # far better ("ARC-HBR major criteria?": the consensus's definition, not the ACS guideline's default DAPT).
    pool = timed or candidates
    # Nothing states what was asked: the nearest is on the treatment asked of ("resume apixaban?": not aspirin's).
    treatments = asking.treatments_asked(concepts) if asks else []
    pool = [c for c in pool if treatments and asking.about_treatment(c.sentence, treatments)] or pool
    top = min(c.rank for c in pool)
    best = max(pool, key=lambda c: c.score)
    top = best.rank if best.score >= LEAD_MARGIN + max(c.score for c in pool if c.rank == top) else top
    ordered = sorted(
        (c for c in pool if c.rank == top),
        key=lambda c: (-(c.score + (0.15 if c.is_conclusion else 0.0)), c.sentence),
    )
    return ordered[0], unstated


def uncovered(concepts: Sequence[Concept], texts: Sequence[str]) -> list[str]:
    """Return the labels of the question's concepts that none of `texts` addresses."""
    index = TextIndex(" ".join(texts))
    return [concept.label for concept in concepts if not index.covers(concept)]


def compose_answer(
    *,
    question: str,
    evidence: EvidenceSet,
    settings: AnswerSettings,
    question_terms: Sequence[str],
    weights: dict[str, float],
    concepts: Sequence[Concept] = (),
    asks: Sequence[str] | None = None,
    focus: frozenset[str] = frozenset(),
    patient: PatientDetails | None = None,
    parts: QuestionParts | None = None,
) -> str:
    """Return an answer built only from admitted `evidence`, each sentence carrying its [citation:docId:chunkId];
    `asks`: what the question asks for, as the pipeline read it (None: read from `question` here); `focus`: the
    words a follow-up adds to the question before it ("and the bleeding signal?"): a sentence using them leads;
    `patient` and `parts`: what the question says of its patient and what an answer can miss (read here when None)."""
    admitted = [s for s in evidence.sources if s.approved and s.origin in (ORIGIN_LIBRARY, ORIGIN_RETRIEVED)]
    library = [s.doc_id for s in admitted if s.origin == ORIGIN_LIBRARY][: settings.composer_library_findings]
    # A study called by a short name ("Reinert cohort: ctDNA+?") speaks first; a guideline not ("ARC-HBR+" = patient).
    found = [(match, doc_id) for pattern, doc_id in evidence.name_patterns() if (match := pattern.search(question))]
    called = {doc_id for match, doc_id in found if len(match.group(0).split()) <= 3}
    offered = sorted((s for s in admitted if s.origin != ORIGIN_LIBRARY or s.doc_id in library),
                     key=lambda s: not (s.doc_id in called and s.kind != StudyKind.GUIDELINE))
    asks, patient = list(asks) if asks is not None else asked_for(question), patient or patient_details(question)
    parts = parts or question_parts(question, concepts)
    candidates = _candidates(
        offered,
        question_terms=question_terms,
        weights=weights,
        concepts=concepts,
        decisions=frozenset(c.code for c in concepts if c.role == DECISION_ROLE and c.code),
        asks=frozenset(asks),
        patient=patient,
    )
    if not candidates:
        return ABSTENTION_NO_EVIDENCE
    # A focused sentence names the drug the question names ("edoxaban - mortality?": not DOAC-over-warfarin's).
    drugs = stems(" ".join(DRUG_NAME.findall(question.lower())))
    focused = [c for c in candidates if c.words & focus and (not drugs or c.words & drugs)] if not asks else []
    lead, unstated = _bottom_line(focused or candidates, asks, concepts, patient.time_points)
    assert lead is not None
    taken = [lead.words]
    # Beyond the lead, a curated finding is quoted for a decision the question asks about: a guideline's
    # recommendation on anticoagulation in AF is no evidence on SGLT2 inhibitors in diabetic kidney disease. (A case's
    # decisions are read from its story too, less surely: its findings are not held to them.) Nor is the lead's source
    # quoted again for other patients (its outpatient regimen, for a patient in the ICU); another study may be.
    decisions = [c for c in concepts if c.role == DECISION_ROLE] if not parts.is_case else []
    on_decision = [c for c in candidates if not (c.misfit and c.source.doc_id == lead.source.doc_id)
                   and (c.section != CURATED_FINDING or on_decisions(c.sentence, decisions))]
    rest = _select([c for c in on_decision if c is not lead], taken=taken, settings=settings)
    quoted = [lead, *rest]
    # A decision is covered when a quoted sentence states its kind of answer ("1 month" for a duration).
    stated = {kind for kind in ASKS if any(states(kind, c.sentence) for c in quoted)}
    # A study the question names ("What do DYNAMIC / GALAXY show?") is a source, not a clinical part to cover.
    named = [*evidence.library, *admitted]
    names = {name.lower() for s in named for name in (s.study_name, *s.names) if name}
    # Patient details are context, not parts to answer: the population ("older adults" for a 78-year-old), a
    # kidney stage ("CKD4") or care setting ("ICU") once a quoted sentence is stated for the patient's.
    kidney_fitted = patient.kidney is not None and any(fits(patient.kidney, c.sentence) for c in quoted)
    setting_fitted = any(care_settings.fits(patient.setting, c.sentence) for c in quoted)
    cited = {c.source.doc_id for c in quoted}
    # A decision a quoted finding is tagged with is covered, in whatever words (a finding on recurrence, "prognosis?").
    tagged = decisions_tagged(f for c in quoted for f in c.source.findings if f.shown == c.sentence)
    names_study = any(doc_id in cited for _, doc_id in found)
    open_concepts = [
        c for c in (parts.naming_study if names_study else parts.answerable)
        if not (c.role == DECISION_ROLE and c.answer_kind in stated)
        and c.label.lower() not in names
        and c.role != POPULATION
        and not (kidney_fitted and question_range(c.label) is not None)
        and not (setting_fitted and care_settings.settings_in(c.label))
        and not (c.role == DECISION_ROLE and c.code in tagged)
    ]
    unspoken = unanswered_parts(parts, [c.sentence for c in quoted], sources=named)
    finding = f"{_label(lead)}{_with_citation(asked_first(lead.sentence, asks, patient.kidney), lead.source)}"
    # No quoted finding speaks to the drug asked about, is stated for this patient (only another stage, episode length
    # or narrower group was found) or states what was asked: said first, then the nearest finding.
    misfit = "has no finding stated for these patients" if lead.misfit else ""
    gap = f"gives no finding on {_join(unspoken)}" if unspoken else misfit
    if gap or (unstated and unstated == asks):
        gap = gap or f"does not state {_join([ASK_WORDS[k] for k in unstated])}"
        blocks = [f"**Bottom line:** The cited evidence {gap}. Nearest finding: {finding}"]
    else:
        blocks = [f"**Bottom line:** {finding}"]
        if unstated:
            blocks[0] += f" The cited evidence does not state {_join([ASK_WORDS[kind] for kind in unstated])}."
    if rest:
        blocks.append("### Evidence")
        blocks.append("\n".join(f"- {_label(c)}{_with_citation(c.sentence, c.source)}" for c in rest))
    texts = [f"{s.title} {s.study_name} {s.text}" for s in admitted if s.doc_id in cited]
    missing = uncovered(open_concepts, texts) if concepts else []
    if missing:
        blocks.append("### What the evidence does not cover")
        blocks.append(f"The cited sources do not address {_join(missing)}; weigh that part with clinical judgement.")
    return "\n\n".join(blocks)


def _lead_order(c: Candidate, stated: Sequence[str], concepts: Sequence[Concept]) -> tuple[int, bool, float]:
    """All that was asked stated first, else what was asked first; then the score. (A finding for a narrower group
    than the question's, another stage or longer episodes is a misfit: it leads only when nothing else was found.)"""
    answered = [answers(kind, c.sentence, concepts) for kind in stated]
    return sum(answered), answered[0], c.score


def _label(candidate: Candidate) -> str:
    """Return "**Study** (journal, year): " for a library sentence, with who vouched for a curated finding."""
    label = candidate.source.label(candidate.sentence)
    name = candidate.source.study_name or candidate.source.title
    return f"**{name}**{label.removeprefix(name)}" if label else ""


def _join(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]
