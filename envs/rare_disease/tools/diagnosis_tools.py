"""The rare-disease tools: disease search and profiles, HPO lookup, the reference ranker, ask_patient.

Why these: they are the moves of a clinical geneticist with a phenotype
database — look up what a finding is called (``lookup_phenotype``), move up
or down the ontology (``phenotype_relatives``), search and read disease
profiles (``search_diseases``, ``get_disease``), run a Phenomizer-style
ranking (``rank_by_phenotypes``, switchable off), and ask the patient about a
finding (``ask_patient``, multi-turn only).

No leakage: every tool except ``ask_patient`` is a function of its arguments
and the read-only KB alone, so it cannot reveal the patient's disease, the
split or hidden findings; error messages name only the argument at fault.
``ask_patient`` answers truthfully from the patient's record (via
:func:`~agentenv.envs.rare_disease.dialogue.patient_answers.ask`), which is the one intended
way to learn hidden findings, and is counted in ``questions_asked``. It
answers as a person does: presence for a broad term, and a hidden finding
only when asked about it or about its direct parent, so sweeping the
ontology's broad terms reveals little. One call asks about one finding, and
each call is a tool call (charged by any reward with a ``tool_call_cost``). It
reads the episode's :class:`Consultation` (the env's per-episode context,
passed by the turn engine: the tool ``takes_context``), so the tool bodies
hold no reference to an env and serve every episode alike.

``latency_ms`` models a production deployment (declared, not measured; it
feeds the ``latency_ms`` reward component): an index search 60 ms, a
database read 20 ms, a term lookup 30 ms, an ontology hop 15 ms, a ranking
service 250 ms, and a question answered by a patient 2 s.

The argument models are in :mod:`agentenv.envs.rare_disease.tools.args`.

Example:
    >>> frequency_text(FrequencyClass.FREQUENT, 0.6415), frequency_text(FrequencyClass.VERY_FREQUENT, None)
    ('frequent (64%)', 'very frequent (80-99%)')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentenv.corpora.hpo.hpoa import FREQUENCY_RANGES, FrequencyClass
from agentenv.corpora.hpo.knowledge_base import HpoKnowledgeBase
from agentenv.engine.tools import Tool, ToolError
from agentenv.envs.rare_disease.dialogue.patient_answers import ask
from agentenv.envs.rare_disease.grading.answers import canonical_id, find_ids
from agentenv.envs.rare_disease.patients.simulated import Patient
from agentenv.envs.rare_disease.tools.args import (
    AskPatientArgs,
    GetDiseaseArgs,
    LookupPhenotypeArgs,
    PhenotypeRelativesArgs,
    RankArgs,
    SearchDiseasesArgs,
)
from agentenv.envs.rare_disease.tools.phenotype_ranker import reference_ranker
from agentenv.envs.rare_disease.tools.search_indexes import phenotype_index
from agentenv.retrieval.base import Retriever
from agentenv.retrieval.tokenize import terms_bound

MAX_PHENOTYPES = 80
"""get_disease lists at most this many phenotypes (most frequent first) and counts the rest."""
MAX_CHILDREN = 40
"""phenotype_relatives lists at most this many children and counts the rest."""
ANSWER_WORDS = {"yes": "yes", "no": "no", "unknown": "not sure"}
"""How :class:`~agentenv.envs.rare_disease.patients.simulated.AskAnswer` answers are worded for the agent."""


@dataclass
class Consultation:
    """Per-episode state of the one patient-facing tool: the patient and the questions so far.

    The rare-disease env's episode context (``_start_episode``); ``ask_patient`` updates it and
    the grader reads ``questions`` from it.
    """

    patient: Patient
    questions: int = 0
    revealed: list[str] = field(default_factory=list)
    """Hidden findings disclosed by answers, in order."""


def frequency_text(cls: FrequencyClass, value: float | None) -> str:
    """How often a disease shows a phenotype, in words (the pooled percentage when the sources give one)."""
    name = cls.name.lower().replace("_", " ")
    if value is not None:
        return f"{name} ({round(100 * value)}%)"
    if cls in FREQUENCY_RANGES and cls != FrequencyClass.OBLIGATE:
        lo, hi = FREQUENCY_RANGES[cls]
        return f"{name} ({round(100 * lo)}-{round(100 * hi)}%)"
    return "obligate (100%)" if cls == FrequencyClass.OBLIGATE else "frequency unknown"


class RareDiseaseTools:
    """The tool bodies over one KB; only ``ask_patient`` reads the episode (its :class:`Consultation`)."""

    def __init__(
        self, kb: HpoKnowledgeBase, retriever: Retriever | None, *, ranker: bool = True
    ) -> None:
        self.kb = kb
        self.retriever = retriever
        # Loaded here, at make, from the disk caches and shared per process: a first call that
        # built them took 0.4-1.4 s inside the step, under the tool's deadline.
        self.phenotypes = phenotype_index(kb)
        self.ranker = reference_ranker(kb) if ranker else None

    def _term(self, hpo_id: str) -> str:
        term = self.kb.resolve_term(hpo_id)
        if term is None:
            raise ToolError(
                f"unknown or obsolete HPO id {hpo_id!r} (HPO {self.kb.release}); "
                "find a current id with lookup_phenotype"
            )
        return term

    def _brief(self, term: str) -> dict[str, str]:
        return {"id": term, "label": self.kb.term_name(term)}

    def search_diseases(self, args: SearchDiseasesArgs) -> dict[str, Any]:
        if self.retriever is None:
            raise ToolError("search_diseases has no index in this env")
        hits = self.retriever.search(args.query, args.k)
        return {
            "results": [
                {"id": h.doc_id, "name": self.kb.disease_name(h.doc_id), "score": round(h.score, 2)}
                for h in hits
            ]
        }

    def get_disease(self, args: GetDiseaseArgs) -> dict[str, Any]:
        kb = self.kb
        ids = list(find_ids(args.disease_id))
        if len(ids) != 1 or ids[0].group(0).strip() != args.disease_id.strip():
            raise ToolError(
                f"{args.disease_id!r} is not a disease id; give one id such as 'OMIM:154700' "
                "(search_diseases finds ids)"
            )
        did = canonical_id(ids[0])
        if not kb.in_universe(did):
            raise ToolError(
                f"{did} is not a disease of the {kb.universe!r} universe (HPO {kb.release})"
            )
        info = kb.disease(did)
        order = sorted(
            info.phenotypes,
            key=lambda a: (
                a.frequency_class == FrequencyClass.UNKNOWN,
                int(a.frequency_class),
                -(a.frequency_value or 0.0),
                a.term_id,
            ),
        )
        shown = [
            {
                **self._brief(a.term_id),
                "frequency": frequency_text(a.frequency_class, a.frequency_value),
            }
            for a in order[:MAX_PHENOTYPES]
        ]
        out: dict[str, Any] = {"id": did, "name": info.name}
        if info.synonyms:
            out["synonyms"] = list(info.synonyms)
        out["phenotypes"] = shown
        if len(order) > MAX_PHENOTYPES:
            out["more_phenotypes"] = len(order) - MAX_PHENOTYPES
        if info.excluded:
            out["absent_phenotypes"] = [self._brief(t) for t in info.excluded[:20]]
        if info.inheritance:
            out["inheritance"] = [kb.term_name(t) for t in info.inheritance]
        return out

    def lookup_phenotype(self, args: LookupPhenotypeArgs) -> dict[str, Any]:
        matches = self.phenotypes.lookup(args.text, args.limit)
        rows = []
        for m in matches:
            row = {"id": m.id, "label": m.label, "match": m.how}
            if m.matched != m.label:
                row["matched"] = m.matched
            rows.append(row)
        return {"matches": rows}

    def phenotype_relatives(self, args: PhenotypeRelativesArgs) -> dict[str, Any]:
        kb = self.kb
        term = self._term(args.hpo_id)
        info = kb.term(term)
        children = kb.children(term)
        out: dict[str, Any] = {"id": term, "label": info.name}
        if term != args.hpo_id.strip():
            out["requested"] = args.hpo_id
        if info.definition:
            out["definition"] = info.definition[:300]
        out["parents"] = [self._brief(p) for p in info.parents]
        out["children"] = [self._brief(c) for c in children[:MAX_CHILDREN]]
        if len(children) > MAX_CHILDREN:
            out["more_children"] = len(children) - MAX_CHILDREN
        return out

    def rank_by_phenotypes(self, args: RankArgs) -> dict[str, Any]:
        unknown = [t for t in args.hpo_ids if self.kb.resolve_term(t) is None]
        if unknown:
            raise ToolError(
                f"unknown or obsolete HPO id(s) {unknown} (HPO {self.kb.release}); "
                "find current ids with lookup_phenotype"
            )
        ranker = self.ranker if self.ranker is not None else reference_ranker(self.kb)
        ranking = ranker.rank(args.hpo_ids, k=args.k)
        return {
            "ranking": [
                {"rank": i, "id": did, "name": self.kb.disease_name(did), "score": round(score, 3)}
                for i, (did, score) in enumerate(ranking, 1)
            ]
        }

    def ask_patient(
        self, args: AskPatientArgs, consultation: Consultation | None
    ) -> dict[str, Any]:
        term = self._term(args.hpo_id)
        if not isinstance(consultation, Consultation):
            raise ToolError("there is no patient to ask in this episode")
        reply = ask(self.kb, consultation.patient, term)
        consultation.questions += 1
        out: dict[str, Any] = {**self._brief(reply.term_id), "answer": ANSWER_WORDS[reply.answer]}
        if reply.revealed:
            consultation.revealed.extend(
                t for t in reply.revealed if t not in consultation.revealed
            )
            out["details"] = [self._brief(t) for t in reply.revealed]
        return out


LOOKUP_WORK_PER_WORD = 6
"""Work units (:attr:`agentenv.engine.tools.Tool.work`) of each word of a ``lookup_phenotype`` text: each
word's posting list is intersected, and common words ("abnormality", "of") list thousands of
entries, so 32 look-ups of 200 characters of them took 31-48 ms in one action."""


SEARCH_WORK_PER_WORD = 12
"""Work units of each query word of ``search_diseases`` (BM25 adds each query token's postings in
turn: 32 searches of 500 characters took 24-56 ms in one action), as MediaSearch's ``search``."""


def search_work(args: SearchDiseasesArgs) -> int:
    """Work units of a ``search_diseases`` call: the results it lists, and a share per query word."""
    return args.k + SEARCH_WORK_PER_WORD * terms_bound(args.query)


RANK_WORK_BASE = 40
"""Work units of any ``rank_by_phenotypes`` call: it scores every disease of the universe (about
0.3-0.4 ms however few its findings), so 32 one-finding calls in one action took 12 ms and more."""
RANK_WORK_PER_TERM = 2
"""Work units of each distinct finding of a ``rank_by_phenotypes`` call (each adds a pass over the
diseases annotated below it: 50 findings took 0.7-1.0 ms a call, 32 such calls 28-103 ms an action)."""


def rank_work(args: RankArgs) -> int:
    """Work units of a ``rank_by_phenotypes`` call: the disease-wide scoring, a share per finding, the
    results it lists. A budget of 1,000 units runs 6 calls of 50 findings or 19 of one in an action."""
    return RANK_WORK_BASE + RANK_WORK_PER_TERM * len(set(args.hpo_ids)) + args.k


def lookup_work(args: LookupPhenotypeArgs) -> int:
    """Work units of a ``lookup_phenotype`` call: the terms it may list, and a share per word."""
    return args.limit + LOOKUP_WORK_PER_WORD * terms_bound(args.text)


def make_rare_disease_tools(
    kb: HpoKnowledgeBase,
    *,
    ranker_tool: bool = True,
    ask_patient: bool = True,
    retriever: Retriever | None = None,
) -> list[Tool]:
    """The tools of one env, as :class:`~agentenv.engine.tools.Tool` objects.

    Args:
        kb: the knowledge base (its universe bounds every disease tool).
        ranker_tool: include ``rank_by_phenotypes``.
        ask_patient: include ``ask_patient``, which reads the episode's :class:`Consultation`
            (the env's context; an env without one makes it an error observation).
        retriever: the disease index of ``search_diseases`` (see :mod:`.documents`).

    The indexes the tools read (phenotype lookup, the reference ranker) are loaded here, when the
    env is made, so that no step pays for a one-time build (:mod:`.search_indexes`).
    """
    body = RareDiseaseTools(kb, retriever, ranker=ranker_tool)
    tools = [
        Tool(
            "search_diseases",
            "Search diseases by name or by findings (BM25 over names, synonyms and "
            "annotated phenotype labels); returns ids and names.",
            SearchDiseasesArgs,
            body.search_diseases,
            latency_ms=60.0,
            work=search_work,
        ),
        Tool(
            "get_disease",
            "Show a disease's name, synonyms and annotated phenotypes with how often "
            "each occurs (most frequent first), its absent features and inheritance.",
            GetDiseaseArgs,
            body.get_disease,
            latency_ms=20.0,
            max_output_chars=12_000,
        ),
        Tool(
            "lookup_phenotype",
            "Find HPO terms for a finding by label, synonym, lay phrase or id: "
            "exact matches first, then terms containing all the words.",
            LookupPhenotypeArgs,
            body.lookup_phenotype,
            latency_ms=30.0,
            work=lookup_work,
        ),
        Tool(
            "phenotype_relatives",
            "Show an HPO term's definition, its parents (more general) and "
            "children (more specific).",
            PhenotypeRelativesArgs,
            body.phenotype_relatives,
            latency_ms=15.0,
        ),
    ]
    if ranker_tool:
        tools.append(
            Tool(
                "rank_by_phenotypes",
                "Rank every disease by phenotype similarity (Phenomizer-style, "
                "information content of the best shared ancestor) to the given present findings.",
                RankArgs,
                body.rank_by_phenotypes,
                latency_ms=250.0,
                work=rank_work,
            )
        )
    if ask_patient:
        tools.append(
            Tool(
                "ask_patient",
                "Ask the patient whether they have one finding; answers yes, no, or not "
                "sure. A yes names the patient's unreported findings that are this term or a direct child "
                "of it (a broader term gets a plain yes: ask about specific findings). Each question counts.",
                AskPatientArgs,
                body.ask_patient,
                latency_ms=2000.0,
                takes_context=True,
            )
        )
    return tools
