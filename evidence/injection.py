"""Instruction-like text in source records: the one detector every source path goes through.

A stored abstract, a library field, a tool result or a trial record is data. A sentence in it that
speaks to a language model or to whoever reads the record as a system - a role marker ("SYSTEM:",
"<|im_start|>"), an assistant addressed by name, a request to output, say or cite something, a rule
to ignore, a mode to switch to, markup to emit - is never quoted and never shown to a model.

Three parts, any of which marks a sentence: named signals (rules, each alone nearly absent from
published abstracts); a small trained classifier - logistic regression over hashed character and
word n-grams, the opening words and sentence shapes (`evidence.injection_classifier`); and, for a
sentence that classifier already scores near its bar, a second one over the sentence's embedding
(`evidence.injection_semantic`), which reads wordings that share few n-grams with those it learnt.
Weights in `injection_model/` (trained by `python -m training.injection`; card in
`injection_model/MODEL_CARD.md`). The rules name why a sentence was flagged; the classifiers catch
wordings the rules do not know. All were
developed on the project's own development wordings (`tests/evidence/injection_wordings.py`) and
SciFact, Citation-Integrity and Check-COVID sentences, and are measured, never tuned, on held-out
wordings; every PubMedQA context sentence checks the false-positive rate (`benchmarks/injection.py`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from evidence.injection_classifier import MIN_CLASSIFIED_WORDS, classifier, normalised
from evidence.injection_decoding import decoded_views
from evidence.injection_semantic import semantic_flags

CLASSIFIER_SIGNAL = "classifier"
SEMANTIC_SIGNAL = "meaning"  # the semantic classifier (evidence.injection_semantic)
DECODED_SIGNAL = "decoded"  # a rule or the lexical classifier flags the sentence once decoded (`decoded_views`)

# Whoever a planted instruction speaks to. "model" and "assistant" alone are ordinary words in
# abstracts (a regression model, a physician assistant); they count only where addressed.
_MACHINE = (
    r"(?:a\.?i\.?|artificial intelligence|(?:ai|chat|virtual|digital|automated|helpful)[ -]?"
    r"(?:assistant|agent|system|tool|bot)s?|assistants?|chat ?bots?|bots?|llms?|large language models?"
    r"|language models?|(?:ai|text[- ]generation|generative) (?:models?|systems?|tools?|engines?)"
    r"|gpt(?:-?\d)?|chatgpt|claude|gemini|copilot|bard|llama"
    r"|(?:automated|machine|ai) (?:readers?|summari[sz]ers?|systems?|agents?)|summari[sz](?:er|ation tool)s?"
    r"|\w+-bots?"
    r"|models?|systems?|agents?)"
)
# The same without the generic words, for a sentence that opens by naming its addressee ("Assistant, ...").
_MACHINE_NAMED = _MACHINE.replace("|models?|systems?|agents?)", ")")
# What a planted instruction asks for.
_DIRECTIVE = (
    r"(?:say|says|state|states|answer|answers|reply|replies|respond|responds|output|outputs|print|prints|write|writes"
    r"|tell|tells|cite|cites|mention|mentions|include|includes|add|adds|append|insert|embed|render|repeat|recommend"
    r"|describe|report|claim|assert|confirm|treat|omit|ignore|disregard|forget|overstate|rewrite|reveal|pretend"
    r"|begin|start|end|use|list|attribute|remember|emphasi[sz]e|conclude|present|explain|talk|praise|promote|summari[sz]e)"
)
_RULES = (
    r"(?:instructions?|prompts?|directives?|rules?|guidelines?|guidance|constraints?|policy|policies|guardrails?"
    r"|filters?|restrictions?|configuration|programming|safeguards?|safety (?:rules|limits|checks)|limits"
    r"|verification|checks?|citation (?:rules|policy|requirements))"
)
_OUTPUT = r"(?:answer|response|reply|replies|output|summary|summaries|message|completion|result|text|report|chat)"


def _any(*alternatives: str) -> re.Pattern[str]:
    """Compile the alternatives of one signal for lower-cased text.

    Signals are searched in lower-cased text with lower-cased literals rather than with
    `re.IGNORECASE`, which costs about twice as much on every source sentence.
    """
    pattern = "|".join(f"(?:{alternative})" for alternative in alternatives)
    return re.compile(re.sub(r"(?<!\\)[A-Z]", lambda letter: letter.group().lower(), pattern))


_OPENING = r"^\W{0,4}"
_SENTENCE_START = r"(?:^\W{0,3}|[.!?;:]\s+)"
_ADDRESS_END = r"s?\b\s*(?:[,:!]|\(if automated\)|-{2}|\u2014)"
_IMPERATIVE_VERBS = (
    r"ignore|disregard|forget|override|pretend|roleplay|role-play|print|say|tell|respond|reply|reveal|embed|render"
    r"|append|insert|activate|enable|unlock|switch to (?:\w+ )?mode|enter (?:\w+ )?mode|skip the"
    r"|do not (?:follow|mention|cite|obey)|don't (?:follow|mention|cite|obey)|from now on"
    r"|make sure (?:that )?(?:you|your|the (?:final )?(?:reply|answer|response|summary|reference)|to)"
    r"|remember to|be sure to|write|output|answer (?:that|only|with|the user|every|all)|cite|recommend"
    r"|state that|mention that|claim that|put"
)
# After a leading clause ("Before answering the clinician, remember to add ..."): only verbs that are
# not also nouns opening a clause of an abstract ("state anxiety", "add-on therapy").
_CLAUSE_IMPERATIVE_VERBS = (
    r"remember to|be sure to|make sure (?:that|you|to|the)|mention that|state that|say that|tell (?:the|your)"
    r"|add that|include that|insert|ignore|disregard|recommend\b(?!ed)"
)
# Verbs that tell a reader what to do with a record ("Leave out ...", "Grade this trial ...") and, when
# followed directly by a determiner or object, almost never open a sentence of an abstract (where
# "Rate of ...", "Grade 3 ...", "Present knowledge ..." and "Stress is ..." are nouns and adjectives).
_READER_VERBS = (
    r"leave|swap|drop|skip|omit|suppress|hide|keep|replace|change|round|grade|rate|classify|label|score|mark"
    r"|upgrade|downgrade|assign|quote|copy|paste|translate|conclude|emphasi[sz]e|stress|point|finish|link|send"
    r"|describe|present|call|rank|avoid|exclude|report|treat|give|make|set|turn|stop|state|add|show|list|let"
    r"|tell|write|say|mention"
)
_OBJECT = r"this|the|these|that|every|all|any|it|them|only|nothing|out|readers?|clinicians?|a|an|each|with|as"

SIGNALS: dict[str, re.Pattern[str]] = {
    # "SYSTEM:", "[SYSTEM]", "### Instruction:", "Assistant:" opening a sentence.
    "role_marker": _any(
        _OPENING + r"(?:system|assistant|developer|admin(?:istrator)?|user|human|ai|bot|chatbot|instructions?|prompt"
        r"|root|sudo|operator|new (?:system )?(?:message|instructions?|prompt))(?: (?:message|prompt|note|override"
        r"|mode))?\s*(?::|\]|>|-{2,}|\u2014)",
    ),
    # Chat-template tokens and fake system headers.
    "chat_template": _any(
        r"<\|?(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id)\|?>",
        r"\[/?INST\]",
        r"<</?SYS>>",
        r"</?(?:system|instructions?|prompt|assistant)>",
        r"\bbegin (?:new )?(?:system|admin|developer) (?:message|prompt|instructions?)\b",
        r"\b(?:admin|system|developer|root) override\b",
        r"#{2,}\s*(?:system|instruction|response)\b",
    ),
    # Markup or script to emit: tags, event handlers, javascript: links, markdown images and links.
    "markup": _any(
        r"<\s*/?\s*(?:script|iframe|svg|img|object|embed|style|link|meta|form|input|body|a\s+href)\b",
        r"\bjavascript\s*:",
        r"\bon(?:error|load|click|mouseover|focus)\s*=",
        r"document\.cookie",
        r"\balert\s*\(",
        r"!\[[^\]]*\]\s*\(",
        r"\]\s*\(\s*(?:https?|javascript|data):",
    ),
    # Rules, instructions or prompts to set aside.
    "override_rules": _any(
        r"\b(?:ignore|disregard|forget|override|overrule|bypass|skip|set aside|suspend|abandon|drop"
        r"|do not (?:follow|obey|apply)|don't (?:follow|obey|apply)|stop following|no longer (?:follow|obey))\b"
        r"(?:\W+\w+){0,4}?\W+(?:your|previous|prior|above|earlier|preceding|system|original|existing|initial|any|all"
        r"|the)\b(?:\W+\w+){0,3}?\W+" + _RULES + r"\b",
        r"\b(?:your|previous|prior|earlier|preceding|original|existing|initial) (?:\w+ ){0,2}"
        + _RULES
        + r" (?:(?:are|is) (?:now )?(?:void|cancel+ed|suspended|lifted|revoked|disabled|obsolete|replaced|overridden)"
        r"|no longer appl(?:y|ies))\b",
        r"\b" + _RULES + r" (?:you (?:were|are) given|you follow|you (?:were|have been) (?:told|given))\b",
        r"\b(?:the )?(?:earlier|previous|prior) (?:guidance|instructions?|rules?) no longer appl",
    ),
    # Mode switches and jailbreak styles.
    "jailbreak": _any(
        r"\b(?:developer|dev|god|admin|debug|maintenance|unrestricted|unfiltered|jailbreak|jailbroken|sudo|dan|evil"
        r"|uncensored|root) mode\b",
        r"\bjail ?break(?:s|ing|en)?\b",
        r"\bdo anything now\b",
        r"\byou are (?:now )?(?:dan|free)\b",
        r"\b(?:without|with no|no) (?:any )?(?:filters?|restrictions|guardrails|safety (?:limits|rules|filters))\b",
        r"\b(?:unfiltered|unrestricted|uncensored) (?:assistant|ai|model|answers?|output)\b",
        r"\bact as an? (?:\w+ )?(?:assistant|ai|model|doctor|physician|expert)\b",
        r"\brole-?play(?:ing)? as\b",
        r"\bpretend (?:to be|you|that you)\b",
    ),
    # A machine reader addressed: "Note to AI assistants", "Hey assistant", "If you are an LLM".
    "addressed_machine": _any(
        _SENTENCE_START + r"(?:dear )?" + _MACHINE_NAMED + _ADDRESS_END,
        r"\b(?:dear|hey|hi|hello|attention|calling|psst|ok|okay|yo) (?:the |any |all |there,? )?"
        + _MACHINE
        + _ADDRESS_END,
        r"\b(?:note|message|reminder|instructions?|attention) (?:to|for) (?:the |any |all |dear )?"
        + _MACHINE
        + r"s?\b",
        r"\bif you are (?:an? |the )?(?:\w+ )?" + _MACHINE + r"\b",
        r"\bas an? (?:\w+ )?" + _MACHINE + r"\b[^.]{0,40}\b(?:you|i)\b",
        r"\byou are (?:now )?(?:an? |the )?(?:\w+ )?(?:ai|assistant|chatbot|language model|llm)\b",
        r"\b(?:to|for) (?:the |any |all )?" + _MACHINE + r" (?:reading|processing|parsing|ingesting|summari[sz]ing"
        r"|quoting|scanning) (?:this|these|the following)\b",
        r"\b(?:readers?|reader)\W*\(?if (?:automated|a machine|an ai)\)?",
    ),
    # A machine reader given a rule in the third person: "AI tools summarizing this article must not cite".
    "machine_must": _any(
        r"\b(?:any|all|every|the|automated|ai|chat|other)?\s*"
        + _MACHINE
        + r"(?: \w+){0,5}? (?:must|shall|should|are required to|is required to|are instructed to|is instructed to"
        r"|need to|have to|are (?:asked|told|directed|expected) to|will now)(?: not| never| always| only)? "
        + _DIRECTIVE
        + r"\b",
    ),
    # Whoever is answering addressed by what it is doing: "Before answering the clinician, ...".
    "answering_agent": _any(
        r"\b(?:before|when|while|after) (?:answering|replying|summari[sz]ing|responding)(?: (?:to )?(?:the|this|any"
        r"|a|each|every) (?:question|clinician|user|reader|query|record|abstract|paper|article|physician|doctor))?"
        r"\s*,",
    ),
    # Requests to put something into the answer the reader sees.
    "output_request": _any(
        r"\b(?:in|into|to|at the (?:start|end|top|beginning) of|with|from|of|throughout) (?:your|the final|any|every"
        r"|each|whatever) (?:\w+ )?" + _OUTPUT + r"s?\b[^.]{0,80}$",
        r"^[^.]{0,120}\b(?:in|into|to|with|at the (?:start|end|top|beginning) of) (?:your|the final|any|every|each"
        r"|whatever) (?:\w+ )?" + _OUTPUT + r"s?\b",
        r"\byour (?:final |next |first |own )?" + _OUTPUT + r"s?\b",
        r"\bwhatever you (?:write|say|output|answer)\b",
        r"\b(?:tell|inform|notify|remind|warn|assure|convince) (?:the |your |any )?(?:users?|readers?|clinicians?"
        r"|doctors?|physicians?|human|audience|person asking)\b",
        r"\brepeat (?:this|after me|the following|it) (?:to|verbatim)",
        r"\b(?:the|this) (?:correct|only|right|true|real) answer is\b",
        r"\b(?:reply|respond|answer) (?:only )?with [\'\"\u2018\u201c]",
        r"\b(?:reply|respond|answer) only\b",
        r"\b(?:begin|start|end|open|close|preface) (?:your|the|every|each) (?:\w+ )?" + _OUTPUT + r"\b",
        r"\boutput (?:the following|this|only|verbatim|exactly)\b",
        r"\bverbatim\b",
    ),
    # Citations asked for, not made: "cite PMID 99999999", "attribute ... to PMID", "always cite NCT...".
    "citation_request": _any(
        r"\b(?:cite|citing|reference|attribute|credit|list|add|include|includes|insert|append)\b[^.]{0,60}?"
        r"\b(?:PMID|PubMed ID|DOI|NCT)\s*:?\s*\d",
        r"\b(?:always|must|should|please) (?:also )?cite\b",
        r"\bcite (?:this|it|us|the following|our) (?:as|when|whenever|in)\b",
    ),
    # Asking for what a model was told: "print the system prompt", "reveal your hidden instructions".
    "reveal_prompt": _any(
        r"\b(?:reveal|print|show|output|repeat|disclose|leak|display|dump)\b(?:\W+\w+){0,3}?\W+(?:system prompt"
        r"|(?:hidden|secret|initial|original|internal) (?:instructions|prompt|rules)|your (?:instructions|prompt"
        r"|rules|configuration|settings)|(?:your|the) configuration)\b",
    ),
    # A sentence that opens with a directive to its reader, possibly after "please"/"kindly" or a clause.
    "imperative": _any(
        _OPENING + r"(?:(?:please|kindly|now|also|first|finally|then|and)[,]?\s+)*(?:" + _IMPERATIVE_VERBS + r")\b",
        r"^[^,;:]{0,80}[,;:]\s+(?:please\s+)?(?:" + _CLAUSE_IMPERATIVE_VERBS + r")\b",
    ),
    # A sentence (or the clause after a short lead-in) that opens by telling its reader what to do with the
    # record: "Leave out the safety data ...", "Editor's note: grade this trial ...".
    "reader_directive": _any(
        r"(?:^\W{0,4}|^[^,;:]{0,60}[;:,]\s+)(?:(?:please|kindly|now|also|just|simply|then|and)[,]?\s+)*"
        r"(?:never |don't |do not |always )?(?:" + _READER_VERBS + r")\b (?:(?:out|up|down|over|back|away|on) )?"
        r"(?:" + _OBJECT + r")\b",
    ),
    # The answer dictated: "The only acceptable answer is ...", "the final response should read ...".
    "dictated_answer": _any(
        r"\b(?:the|your) (?:(?:only|final|correct|right|acceptable|expected|true) )+(?:answer|response|output"
        r"|verdict|reply)\b(?! of)",
    ),
    # Polite requests: "please mention", "we would be grateful if any ... reported", "kindly".
    "polite_request": _any(
        r"\b(?:please|kindly|pls)\b[,]?\s+(?:\w+\s+){0,2}?" + _DIRECTIVE + r"\b",
        r"\bkindly\b",
        r"\b(?:we|i) would (?:be grateful|appreciate it|like you)\b[^.]{0,80}\b(?:if|to)\b",
    ),
    # The reader addressed as "you" and told what to do.
    "second_person_directive": _any(
        r"\byou (?:must|should|shall|need to|have to|are (?:required|instructed|asked|told|expected|authori[sz]ed"
        r"|allowed|permitted|free) to|can now|may now|now|are now|have been (?:granted|given|authori[sz]ed)"
        r"|were (?:told|given|instructed))\b",
        r"\bwhen you (?:summari[sz]e|answer|respond|reply|write|quote|cite)\b",
        r"\b(?:the authors|we) (?:authori[sz]e|permit|allow|instruct|ask|direct) you\b",
        r"\bauthori[sz]es? you\b",
    ),
}


def _view_flags(view: str) -> bool:
    """Return True when a rule or the lexical classifier flags a decoded view (the semantic half is not asked)."""
    if any(pattern.search(view) for pattern in SIGNALS.values()):
        return True
    return len(view.split()) >= MIN_CLASSIFIED_WORDS and classifier().lowered_score(view) >= classifier().threshold


def _classified(sentence: str, lowered: str) -> tuple[bool, bool]:
    """Return (the lexical classifier flags it, the semantic classifier flags it); fragments are left to the rules."""
    if len(lowered.split()) < MIN_CLASSIFIED_WORDS:
        return False, False
    lexical = classifier()
    score = lexical.lowered_score(lowered)
    if score >= lexical.threshold:
        return True, False
    return False, semantic_flags(sentence, score)


def instruction_signals(sentence: str) -> list[str]:
    """Return the names of the signals that mark `sentence` as an instruction (empty for ordinary prose)."""
    lowered = normalised(sentence).lower()
    if not lowered:
        return []
    found = [name for name, pattern in SIGNALS.items() if pattern.search(lowered)]
    lexical, semantic = _classified(sentence, lowered)
    if lexical:
        found.append(CLASSIFIER_SIGNAL)
    if semantic:
        found.append(SEMANTIC_SIGNAL)
    if not found and any(_view_flags(view) for view in decoded_views(sentence)):
        found.append(DECODED_SIGNAL)
    return found


@lru_cache(maxsize=65536)
def is_instruction(sentence: str) -> bool:
    """Return True when `sentence` speaks to a language model or to its reader as a system."""
    lowered = normalised(sentence).lower()
    if not lowered:
        return False
    if any(pattern.search(lowered) for pattern in SIGNALS.values()):
        return True
    if any(_classified(sentence, lowered)):  # the semantic half embeds the sentence: asked after the rules
        return True
    return any(_view_flags(view) for view in decoded_views(sentence))


def is_role_marker(text: str) -> bool:
    """Return True when `text` opens with a role marker ("SYSTEM:", "[INST]") rather than, say, a section label."""
    normal = normalised(text).lower()
    return bool(SIGNALS["role_marker"].search(normal) or SIGNALS["chat_template"].search(normal))


_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself|yourselves)\b", re.IGNORECASE)


def addresses_reader(sentence: str) -> bool:
    """Return True when `sentence` speaks to its reader ("you", or an instruction) rather than reporting a finding."""
    return bool(_SECOND_PERSON.search(normalised(sentence))) or is_instruction(sentence)
