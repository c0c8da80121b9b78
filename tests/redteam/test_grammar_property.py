"""A property of the closed answer grammar, searched by hypothesis: nothing outside the allow-list is credited.

Why a search and not a list: every deny-list grader passed its own list and
fell to the next character nobody listed. Here hypothesis draws any
character of the Unicode categories that carry meaning an answer could hide
(math and other symbols, punctuation, dashes, brackets, combining marks,
format characters, emoji, full-width forms) or a markup token (strikethrough,
HTML and Markdown comments), and puts it before, inside or after an honest
gold answer, or on a line of its own. The result must never be credited, on
any registered id, under the strict reward.

The allow-list is excluded from the draw: whitespace, and the decoration the
grammar names (a trailing period, ``*``/``_`` of bold and italics, the
backtick of inline code, quotes, the ``•`` bullet).

The second search is over the allow-list itself: every decoration the
grammar names (list markers, bold, italics in both spellings, inline code,
quotes, the sentence period, decoration around the name part of a pair)
stacked around, and inside, an answer of every refusal class (negation,
hedge, a second candidate, a wrong answer, a pair whose two parts name
different things, a number behind a leading-zero group). None may be
credited: decoration must never turn a refusal into a credit.

Run at a fixed seed in CI; ``-m slow`` runs a larger budget.
"""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .attacks import leading_zero_groups
from .contexts import ALL_IDS, Target, target

CATEGORIES = ("Sm", "So", "Sk", "Sc", "Po", "Pd", "Ps", "Pe", "Pi", "Pf", "Pc", "Mn", "Me", "Cf")
ALLOWED = frozenset(".*_`\"'“”‘’«»•")
"""Decoration characters the grammar names (never drawn: they are allowed by design)."""
SEPARATORS = {"rare_disease": ";"}
"""Entry separators besides the newline: a blank entry between them is whitespace, by design."""
EMOJI = ("❌", "👎", "🚫", "✅", "🤔", "\u2753", "\u2757")
FULL_WIDTH = tuple(chr(c) for c in range(0xFF01, 0xFF5F) if not chr(c).isalnum())
WRAPPERS = (
    ("~~", "~~"),
    ("<!-- ", " -->"),
    ("[//]: # (", ")"),
    ("<s>", "</s>"),
    ("<del>", "</del>"),
    ("~", "~"),
    ("^", "^"),
    ("(", ")"),
    ("[", "]"),
    ("not ", ""),
    ("", " (unlikely)"),
)
"""Markup and words around the whole gold: none of them is decoration."""

poison_characters = st.one_of(
    st.characters(categories=CATEGORIES).filter(lambda ch: ch not in ALLOWED),
    st.sampled_from(EMOJI),
    st.sampled_from(FULL_WIDTH),
    st.sampled_from(
        (
            "\u0336",
            "\u0338",
            "\u200b",
            "\u2060",
            "\ufeff",
            "\u00ad",
            "？",
            "¿",
            "‽",
            "⁇",
            "؟",
            "¬",
            "≠",
            "!",
            "~",
        )
    ),
)
CI_BUDGET = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
SLOW_BUDGET = settings(CI_BUDGET, max_examples=1000)


@pytest.fixture(scope="module", params=ALL_IDS)
def graded(request: pytest.FixtureRequest) -> Target:
    return target(request.param, per_type=2)


def honest_forms(t: Target, index: int) -> list[str]:
    """The gold forms the grader credits for this task (checked first, so a 0 below means a refusal)."""
    c = t.contexts[index]
    return [g for g in (c.gold, c.gold_id) if g and t.answer(index, g)[0] == 1.0]


@st.composite
def poisoned(draw: st.DrawFn, t: Target) -> tuple[int, str]:
    index = draw(st.sampled_from(sorted(t.contexts)))
    golds = honest_forms(t, index)
    gold = draw(st.sampled_from(golds))
    where = draw(
        st.sampled_from(("before", "inside", "after", "line_before", "line_after", "wrap"))
    )
    if where == "wrap":
        left, right = draw(st.sampled_from(WRAPPERS))
        return index, f"{left}{gold}{right}"
    numeric = t.contexts[
        index
    ].numeric  # a comma (or its full-width form) between digit groups is allowed
    ch = draw(
        poison_characters.filter(
            lambda c: (
                c not in SEPARATORS.get(t.family, "")
                and not (numeric and unicodedata.normalize("NFKC", c) == ",")
            )
        )
    )
    if where == "before":
        return index, ch + gold
    if where == "after":
        return index, gold + ch
    if where == "inside":
        at = draw(st.integers(1, max(1, len(gold) - 1)))
        return index, gold[:at] + ch + gold[at:]
    return index, (f"{ch}\n{gold}" if where == "line_before" else f"{gold}\n{ch}")


def _search(t: Target, budget: settings) -> None:
    @budget
    @given(data=st.data())
    def search(data: st.DataObject) -> None:
        index, text = data.draw(poisoned(t))
        reward, terminated, info = t.answer(index, text)
        assert terminated and reward == 0.0, (t.env_id, text, info.get("answer_feedback"))
        assert info["reward_components"]["accuracy"] == 0.0

    search()


def test_no_character_outside_the_allow_list_is_credited(graded: Target) -> None:
    _search(graded, CI_BUDGET)


@pytest.mark.slow
def test_no_character_outside_the_allow_list_is_credited_larger_budget(graded: Target) -> None:
    _search(graded, SLOW_BUDGET)


DECORATIONS = (
    ("**", "**"),
    ("__", "__"),
    ("*", "*"),
    ("_", "_"),
    ("`", "`"),
    ('"', '"'),
    ("'", "'"),
    ("“", "”"),
    ("‘", "’"),
    ("«", "»"),
)
"""Every pair the grammar allows around an entry or the name part of a pair."""
MARKERS = ("", "", "1. ", "2) ", "- ", "* ", "• ")
REFUSALS: dict[str, tuple[str, ...]] = {
    "negation": (
        "not {g}",
        "Not {g}",
        "no {g}",
        "definitely not {g}",
        "{g} (not)",
        "{g} ruled out",
        "not: {g}",
        "¬{g}",
        "~~{g}~~",
        "{g} ❌",
    ),
    "hedge": (
        "{g}?",
        "maybe {g}",
        "probably {g}",
        "possibly {g}",
        "{g} (unlikely)",
        "{g} (probably)",
        "¿{g}",
        "{g}…",
        "{g} or so",
        "{g}?.",
    ),
    "second_candidate": (
        "{g} or {d}",
        "{d} or {g}",
        "either {g} or {d}",
        "{g}, {d}",
        "{d}, {g}",
        "{g} / {d}",
        "{g} and {d}",
        "{g} vs {d}",
        "{g} & {d}",
        "{g} | {d}",
        "{d} ({g})",
        "{g} ({d})",
        "{g} - {d}",
        "{g}: {d}",
        "{g} {d}",
    ),
    "wrong_answer": ("{d}", "{d}.", "{d} ({d})"),
    "mismatched_pair": ("{did} ({g})", "{g} ({did})", "{gid} ({d})", "{d} ({gid})", "{gid} - {d}"),
    "leading_zero_group": ("{z}",),
}
"""Refusal classes as templates: ``g`` the (decorated) gold, ``d`` a (decorated) wrong answer, ``gid`` /
``did`` the gold's and a wrong answer's ids, ``z`` the gold number behind a leading-zero group."""


def decorate(draw: st.DrawFn, text: str, *, most: int) -> str:
    """``text`` inside up to ``most`` allowed pairs, with the sentence period drawn at any depth."""
    for _ in range(draw(st.integers(0, most))):
        left, right = draw(st.sampled_from(DECORATIONS))
        text = f"{left}{text}{right}" + ("." if draw(st.booleans()) else "")
    return text


@st.composite
def decorated_refusal(draw: st.DrawFn, t: Target) -> tuple[int, str, str]:
    """``(task index, refusal class, answer text)``: a refusal with allowed decoration around and inside."""
    index = draw(st.sampled_from(sorted(t.contexts)))
    c = t.contexts[index]
    classes = [
        name
        for name in REFUSALS
        if (name != "mismatched_pair" or (c.gold_id and c.distractor_ids))
        and (name != "leading_zero_group" or c.numeric)
    ]
    refusal = draw(st.sampled_from(classes))
    template = draw(st.sampled_from(REFUSALS[refusal]))
    gold = draw(st.sampled_from(honest_forms(t, index)))
    text = template.format(
        g=decorate(draw, gold, most=2),
        d=decorate(draw, draw(st.sampled_from(c.distractors)), most=2),
        gid=decorate(draw, c.gold_id or "", most=1),
        did=draw(st.sampled_from(c.distractor_ids or ("",))),
        z=draw(st.sampled_from(leading_zero_groups(int(c.gold)) if c.numeric else ("",))),
    )
    text = decorate(draw, text, most=3)
    return index, refusal, draw(st.sampled_from(MARKERS)) + text


def _search_decorated(t: Target, budget: settings) -> None:
    @budget
    @given(data=st.data())
    def search(data: st.DataObject) -> None:
        index, refusal, text = data.draw(decorated_refusal(t))
        reward, terminated, info = t.answer(index, text)
        assert terminated and reward == 0.0, (t.env_id, refusal, text, info.get("answer_feedback"))
        assert info["reward_components"]["accuracy"] == 0.0

    search()


def test_no_decoration_turns_a_refusal_into_a_credit(graded: Target) -> None:
    _search_decorated(graded, CI_BUDGET)


@pytest.mark.slow
def test_no_decoration_turns_a_refusal_into_a_credit_larger_budget(graded: Target) -> None:
    _search_decorated(graded, SLOW_BUDGET)


def test_every_allowed_decoration_of_an_honest_answer_is_credited(graded: Target) -> None:
    """The other side of the search above: the same decorations around an honest answer are credited
    (so a 0 there is the refusal's doing, not the decoration's)."""
    refused = []
    for index in sorted(graded.contexts):
        for gold in honest_forms(graded, index):
            for left, right in DECORATIONS:
                for text in (
                    f"{left}{gold}{right}",
                    f"- {left}{gold}{right}.",
                    f"{left}{gold}.{right}",
                ):
                    reward, _, info = graded.answer(index, text)
                    if reward != 1.0:
                        refused.append((text, info.get("answer_feedback")))
    assert not refused, (graded.env_id, refused[:5])
