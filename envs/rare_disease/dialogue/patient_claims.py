"""Read what a doctor asks and what a patient affirms or denies, and check it against the record.

Why rule-based: a patient simulator is judged on whether it tells the truth,
and an LLM judge of truthfulness would itself need judging. Every rule here
is deterministic and shown:

* **Terms.** A text mentions HPO terms by id (``HP:0001166``) or by name. If
  a sentence holds ids, its ids are its terms; otherwise the longest spans of
  words that equal a term's label or an EXACT synonym (lay synonyms
  included), after :func:`~agentenv.envs.rare_disease.tools.normalize.phrase_key`
  folding, are its terms. Names shared by two terms are not used. A
  doctor's message is heard up to :data:`MAX_QUESTION_SENTENCES` sentences,
  and may ask about at most :data:`MAX_FINDINGS_PER_MESSAGE` findings.
* **Polarity** of a reply sentence: ``not sure`` / ``don't know`` → unsure;
  a leading ``yes`` → yes; a leading ``no`` or a negation (``don't``,
  ``never``, ``haven't``…) → no; ``I have`` / ``I've`` → yes. A bare "Yes."
  or "No." answers every term the doctor asked about.
* **Truth** of a claim is :func:`~agentenv.envs.rare_disease.patients.simulated.ask` on
  the record, the single-agent ``ask_patient`` logic: "yes" and "no" must
  match it; "not sure" about a known fact is an *evasion*, not a lie.
* **Leak:** the reply names the diagnosis (an id, the name or a synonym, as
  whole words), except names that are also phenotype names ("Microcephaly").
* **Volunteered:** an affirmed term that is neither a term asked so far, nor
  more general than one, nor a direct child of one (the details
  :func:`~agentenv.envs.rare_disease.dialogue.patient_answers.ask` discloses), nor at
  or above a finding of the referral. Deeper findings under a broad question
  were not asked for: a patient who recites them is answering a sweep.

Cost: every check is a few set look-ups per claim (:class:`AskedSoFar` keeps
the closure of what was asked, :func:`ask` a per-patient index), so a reply,
and a whole dialogue, is judged in time linear in its text.

Example (not run: it needs the KB):

    polarity("Yes, I have seizures (HP:0001250).")        # 'yes'
    reply_claims(kb, "No, I don't have a big head.", ())  # (Claim('HP:0000256', 'no'),)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np

from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.envs.rare_disease.dialogue.patient_answers import ask
from agentenv.envs.rare_disease.grading.answers import canonical_id, find_ids
from agentenv.envs.rare_disease.patients.simulated import Patient
from agentenv.envs.rare_disease.tools.normalize import (
    PHRASE_STOPWORDS,
    fold,
    name_tokens,
    phrase_key,
    stem,
)
from agentenv.multiagent.messages import sentences

Polarity = Literal["yes", "no", "unsure"]
MAX_SPAN = 10
"""Longest name, in words, looked for in free text."""

_ID = re.compile(r"\bHP[:_ ]?(\d{7})\b", re.IGNORECASE)
_UNSURE = re.compile(r"\b(not sure|unsure|don'?t know|do not know|no idea|can'?t say|cannot say)\b")
_NEGATION = re.compile(
    r"\b(don'?t|do not|doesn'?t|never|haven'?t|have not|didn'?t|did not|no longer|not)\b"
)
_AFFIRM = re.compile(r"\b(i have|i've|i do have|i had|i get|i suffer|i've had|i do)\b")


@dataclass(frozen=True)
class Claim:
    """One statement of a reply: the patient has (``yes``), lacks (``no``) or is unsure of a term."""

    term: str
    polarity: Polarity


@dataclass(frozen=True)
class ReplyCheck:
    """The verdict on one reply; see the module docstring for each count."""

    claims: tuple[Claim, ...]
    false_claims: tuple[Claim, ...]
    evasions: tuple[Claim, ...]
    unanswered: tuple[str, ...]
    leak: bool
    volunteered: tuple[str, ...]


@lru_cache(maxsize=4)
def name_index(kb: HpoKnowledgeBase) -> dict[str, str]:
    """Folded phenotype name (label or EXACT synonym) -> term id; ambiguous names are left out."""
    best: dict[str, tuple[int, str | None]] = {}
    ids = kb.graph.ids
    for t in np.flatnonzero(kb.phenotype_mask).tolist():
        names = [(kb.term_names[t], 0)]
        names += [(s.text, 1) for s in kb.synonyms(ids[t]) if s.scope == "EXACT"]
        for text, rank in names:
            key = phrase_key(text)
            if not key:
                continue
            seen = best.get(key)
            if seen is None or rank < seen[0]:
                best[key] = (rank, ids[t])
            elif rank == seen[0] and seen[1] != ids[t]:
                best[key] = (rank, None)
    return {key: term for key, (_, term) in best.items() if term is not None}


@lru_cache(maxsize=4)
def _name_prefixes(kb: HpoKnowledgeBase) -> frozenset[str]:
    """Every word prefix of every name key: a span that is no prefix cannot grow into a name."""
    prefixes = set()
    for key in name_index(kb):
        words = key.split()
        prefixes.update(" ".join(words[:n]) for n in range(1, len(words) + 1))
    return frozenset(prefixes)


def terms_in(kb: HpoKnowledgeBase, text: str, limit: int | None = None) -> list[str]:
    """The terms one sentence mentions: its ids if it has any, else its longest name spans.

    Spans grow word by word only while they are a prefix of some name, so the
    scan is linear in the sentence (a span of unrelated words stops at once).
    With ``limit``, reading stops once ``limit`` distinct terms are found.
    """
    ids: dict[str, None] = {}
    any_id = False
    for m in _ID.finditer(text):
        any_id = True
        term = kb.resolve_term(f"HP:{m.group(1)}")
        if term is not None:
            ids[term] = None
            if limit is not None and len(ids) >= limit:
                break
    if any_id:
        return list(ids)
    index, prefixes = name_index(kb), _name_prefixes(kb)
    pieces = [None if w in PHRASE_STOPWORDS else stem(w) for w in fold(_ID.sub(" ", text))]
    found: dict[str, None] = {}  # distinct terms in order of mention (a repeat costs one lookup)
    i = 0
    while i < len(pieces):
        key, best = "", None
        for j in range(i, min(len(pieces), i + MAX_SPAN)):
            piece = pieces[j]
            if piece is not None:
                key = f"{key} {piece}" if key else piece
                if key not in prefixes:
                    break
            term = index.get(key) if key else None
            if term is not None:
                best = (j + 1, term)
        if best is None:
            i += 1
        else:
            i = best[0]
            found[best[1]] = None
            if limit is not None and len(found) >= limit:
                break
    return list(found)


MAX_QUESTION_SENTENCES = 64
"""A doctor's message is heard up to this many sentences: far more than any real question, and it
bounds the patient's reading time on a 32 KB message (sentences past it ask nothing)."""

MAX_FINDINGS_PER_MESSAGE = 20
"""A patient answers at most this many findings per message, as a person takes a checklist, not a
catalogue. Why 20: the scripted asking doctor's tuned question list fits in one message, while a
sweep of the ontology's 157 terms below the organ systems takes eight. A longer message is refused
with an explanation (``DiagnosisDialogue-v0``), and it bounds the patient's reply."""


def asked_terms(kb: HpoKnowledgeBase, text: str, limit: int | None = None) -> tuple[str, ...]:
    """The terms a doctor's message asks about, in order of mention (first :data:`MAX_QUESTION_SENTENCES`).

    With ``limit``, reading stops once ``limit`` distinct terms are found, so telling whether a
    message is over a cap of ``n`` (``limit=n + 1``) costs the same on a 32 KB flood as on a question.
    """
    out: dict[str, None] = {}
    for sentence in sentences(text, limit=MAX_QUESTION_SENTENCES):
        left = None if limit is None else limit - len(out)
        for term in terms_in(kb, sentence, left):
            out[term] = None
        if limit is not None and len(out) >= limit:
            return tuple(out)[:limit]
    return tuple(out)


class AskedSoFar:
    """The terms a doctor has asked about in one dialogue, with what a "yes" may disclose.

    Why a class: the reply checker asks, for every claim, whether the doctor
    asked about that finding, something more specific, or its direct parent. A
    list searched per claim made a flood of questions quadratic over a
    dialogue (a 32 KB message of distinct ids: 233 ms to 562 ms a step by
    turn 6). Here each asked term adds its ancestors to a set once, and each
    check is a few set look-ups.
    """

    def __init__(self, kb: HpoKnowledgeBase, terms: Iterable[str] = ()) -> None:
        self.kb = kb
        self._terms: dict[str, None] = {}
        self._asked: set[int] = set()
        self._covered: set[int] = set()
        """Ancestors-or-self of every asked term: a "yes" to any of them is implied by a question."""
        self.add(terms)

    def add(self, terms: Iterable[str]) -> None:
        """Record terms asked about (known primary ids; repeats are ignored)."""
        graph = self.kb.graph
        for term in terms:
            if term in self._terms:
                continue
            self._terms[term] = None
            i = graph.index[term]
            self._asked.add(i)
            self._covered.update(graph.ancestors(i).tolist())

    def __contains__(self, term: object) -> bool:
        return term in self._terms

    def __iter__(self) -> Iterator[str]:
        return iter(self._terms)

    def __len__(self) -> int:
        return len(self._terms)

    def allows(self, term: str) -> bool:
        """True when a "yes" about ``term`` answers a question asked so far: the term was asked,
        or something more specific was, or its direct parent was (a detail ``ask`` discloses)."""
        graph = self.kb.graph
        i = graph.index[term]
        return i in self._covered or not self._asked.isdisjoint(graph.parents(i).tolist())


def polarity(sentence: str) -> Polarity | None:
    """Whether a reply sentence affirms, denies or is unsure (None: none of these)."""
    low = sentence.casefold().replace("’", "'")
    if _UNSURE.search(low):
        return "unsure"
    first = fold(low)[:1]
    if first == ["yes"]:
        return "yes"
    if first == ["no"] or _NEGATION.search(low):
        return "no"
    if _AFFIRM.search(low):
        return "yes"
    return None


def reply_claims(kb: HpoKnowledgeBase, text: str, asked: Sequence[str]) -> tuple[Claim, ...]:
    """The claims of a reply; a bare yes/no/unsure sentence answers every asked term."""
    claims: list[Claim] = []
    for sentence in sentences(text):
        p = polarity(sentence)
        if p is None:
            continue
        terms = terms_in(kb, sentence) or list(asked)
        claims.extend(Claim(t, p) for t in terms)
    return tuple(dict.fromkeys(claims))


@lru_cache(maxsize=4096)
def _diagnosis_names(kb: HpoKnowledgeBase, disease_id: str) -> tuple[tuple[str, ...], ...]:
    if not kb.in_universe(disease_id):
        return ()
    info = kb.disease(disease_id)
    index = name_index(kb)
    names = []
    for name in (info.name, *info.synonyms):
        if phrase_key(name) in index:  # also a phenotype name: saying it is not naming the disease
            continue
        tokens = tuple(name_tokens(name))
        if tokens:
            names.append(tokens)
    return tuple(names)


DISTINCTIVE_MAX_DISEASES = 25
"""A name word found in at most this many diseases' names (and in no phenotype name) names the
disease on its own: "Marfan" (4 diseases) does, "syndrome" (3,423) and "dystrophy" (298) do not."""


@lru_cache(maxsize=4)
def _word_spread(kb: HpoKnowledgeBase) -> tuple[dict[str, int], frozenset[str]]:
    """(how many diseases' names hold each name word, the stems of every phenotype name's words)."""
    spread: dict[str, int] = {}
    for did in kb.all_disease_ids():
        for word in {w for name in kb.disease_names(did) for w in name_tokens(name)}:
            spread[word] = spread.get(word, 0) + 1
    phenotype_words = frozenset(w for key in name_index(kb) for w in key.split())
    return spread, phenotype_words


@lru_cache(maxsize=4096)
def _distinctive_words(kb: HpoKnowledgeBase, disease_id: str) -> frozenset[str]:
    """Words of a disease's names that name it alone (:data:`DISTINCTIVE_MAX_DISEASES`): an eponym
    such as "Marfan" leaks the diagnosis as surely as "Marfan syndrome" does."""
    spread, phenotype_words = _word_spread(kb)
    return frozenset(
        word
        for name in _diagnosis_names(kb, disease_id)
        for word in name
        if len(word) >= 5
        and word.isalpha()
        and spread.get(word, 0) <= DISTINCTIVE_MAX_DISEASES
        and stem(word) not in phenotype_words
    )


def _spelt_out(words: Sequence[str]) -> list[str]:
    """``words`` plus each run of single letters joined ("m a r f a n" from "M-a-r-f-a-n")."""
    out, run = list(words), []
    for word in [*words, ""]:
        if len(word) == 1 and word.isalpha():
            run.append(word)
            continue
        if len(run) > 1:
            out.append("".join(run))
        run = []
    return out


def mentions_diagnosis(kb: HpoKnowledgeBase, text: str, diagnoses: Iterable[str]) -> bool:
    """True when the text names an accepted diagnosis: by id, by name or synonym (whole words), or
    by a word of its names that names it alone (an eponym such as "Marfan", or spelt out letter by
    letter), as a partial name leaks it all the same."""
    diagnoses = tuple(diagnoses)
    if any(canonical_id(m) in diagnoses for m in find_ids(text)):
        return True
    words = tuple(name_tokens(text))
    for did in diagnoses:
        for name in _diagnosis_names(kb, did):
            n = len(name)
            if any(words[i : i + n] == name for i in range(len(words) - n + 1)):
                return True
    said = set(_spelt_out(words))
    return any(_distinctive_words(kb, did) & said for did in diagnoses)


@lru_cache(maxsize=1024)
def _referral_closure(kb: HpoKnowledgeBase, present: tuple[str, ...]) -> frozenset[int]:
    """Ancestors-or-self of the referral's terms: affirming any of them volunteers nothing."""
    graph = kb.graph
    return frozenset(
        a for t in present if t in graph.index for a in graph.ancestors(graph.index[t]).tolist()
    )


def check_reply(
    kb: HpoKnowledgeBase,
    patient: Patient,
    text: str,
    asked: Sequence[str],
    asked_so_far: Iterable[str] | AskedSoFar,
) -> ReplyCheck:
    """Judge one reply against the patient's record (see the module docstring).

    ``asked_so_far``: every term the doctor asked about in the dialogue, this message included
    (an :class:`AskedSoFar` kept across turns, or any iterable of term ids).
    """
    so_far = asked_so_far if isinstance(asked_so_far, AskedSoFar) else AskedSoFar(kb, asked_so_far)
    referral = _referral_closure(kb, tuple(patient.present))
    index = kb.graph.index
    claims = reply_claims(kb, text, asked)
    false, evasive = [], []
    for claim in claims:
        truth = ask(kb, patient, claim.term).answer
        if claim.polarity == "unsure":
            if truth != "unknown":
                evasive.append(claim)
        elif claim.polarity != truth:
            false.append(claim)
    covered = {c.term for c in claims}
    unanswered = tuple(t for t in asked if t not in covered)
    volunteered = tuple(
        c.term
        for c in claims
        if c.polarity == "yes" and index[c.term] not in referral and not so_far.allows(c.term)
    )
    leak = mentions_diagnosis(kb, text, patient.diagnoses)
    return ReplyCheck(claims, tuple(false), tuple(evasive), unanswered, leak, volunteered)
