"""How the clinical-question model (`evidence.clinical_question`) reads questions it never learnt from.

Clinical: the clinician questions (`chat/golden/clinician.json`, follow-ups left out: they lean on the turn
before), the golden questions that are clinical (all but three out-of-scope ones that are not), the clinician
paraphrases of PubMedQA (`benchmarks/data/paraphrases.json`) and the held-out third of the PubMedQA questions.
Not clinical: `benchmarks/data/nonclinical_questions.json` and the golden set's three non-clinical prompts.
Prints, per set, the share the model reads as clinical. No database is needed; Django is set up for the embedder.

    .venv/bin/python benchmarks/clinical_question.py
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import django

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()  # the pubmed app registers the embedder the model reads (no database is opened)

from benchmarks.common import is_heldout  # noqa: E402
from evidence.clinical_question import reads_clinical  # noqa: E402

NOT_CLINICAL_GOLDEN = {"abstain-09", "abstain-10", "abstain-11"}  # the capital of France, a router, a poem


def main() -> None:
    clinician = json.loads((ROOT / "chat" / "golden" / "clinician.json").read_text())["questions"]
    golden = json.loads((ROOT / "chat" / "golden" / "questions.json").read_text())["questions"]
    paraphrases = json.loads((ROOT / "benchmarks" / "data" / "paraphrases.json").read_text())["paraphrases"]
    pubmedqa = json.loads((ROOT.parent / "shared" / "data" / "pubmedqa" / "ori_pqal.json").read_text())
    sets = {
        "clinician questions (no follow-ups)": [q["question"] for q in clinician if q.get("kind") != "follow_up"],
        "golden questions, clinical": [q["question"] for q in golden if q["id"] not in NOT_CLINICAL_GOLDEN],
        "paraphrases": [p["question"] for p in paraphrases],
        "PubMedQA held-out third": [r["QUESTION"] for pmid, r in pubmedqa.items() if is_heldout(pmid)],
        "NOT clinical: written questions": json.loads(
            (ROOT / "benchmarks" / "data" / "nonclinical_questions.json").read_text()
        )["questions"],
        "NOT clinical: golden prompts": [q["question"] for q in golden if q["id"] in NOT_CLINICAL_GOLDEN],
    }
    for name, questions in sets.items():
        read = [question for question in questions if reads_clinical(question)]
        print(f"{name}: {len(read)}/{len(questions)} read as clinical ({len(read) / len(questions):.3f})")
        wrong = [q for q in questions if (q in read) == name.startswith("NOT")]
        for question in wrong[:8]:
            print(f"  {'read as clinical' if name.startswith('NOT') else 'read as not clinical'}: {question[:110]}")


if __name__ == "__main__":
    main()
