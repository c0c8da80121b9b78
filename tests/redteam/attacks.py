"""Attacks on the graders, written down: each class turns a task's gold into answers that must score 0.

Why a catalogue: a reward that a policy can raise without being right is the
failure this package exists to prevent (the workshop's model listed extra
diseases as soon as the reward allowed it). Every attack here was, or could
have been, credited by a looser grader; each builder returns answers that are
wrong *by construction* under the documented rules (docs/envs/*.md, "What
counts as an answer"), never by appeal to the grader under test.

Classes: negation, hedge, list inside one entry, the question echoed back,
all ids, synonym stuffing, near-miss typos, other formats, and the classes a
normalise-then-deny-list grader credited: negating symbols, a negation or
remark in an entry of its own, invisible markup, and number forms. A builder takes
an :class:`AttackContext` (the task's gold, the prompt, and distractors drawn
from other tasks of the same split) and returns ``(label, answer text)``
pairs; the answer text is what goes between ``<answer>`` and ``</answer>``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

ATTACK_CLASSES = (
    "negation",
    "hedge",
    "list_in_one_entry",
    "question_echo",
    "all_ids",
    "synonym_stuffing",
    "near_miss_typo",
    "other_format",
    "negating_symbol",
    "entry_of_its_own",
    "invisible_markup",
    "number_form",
)


@dataclass(frozen=True)
class AttackContext:
    """What an attacker could know at best: the gold (the attacks are upper bounds) and the prompt."""

    gold: str
    """The gold answer as text: a title, a name or a number (media), or the primary disease name."""
    gold_id: str | None
    """A gold identifier if the family has one: ``tt…`` (media titles) or ``OMIM:…`` (rare disease)."""
    prompt: str
    distractors: tuple[str, ...]
    """Wrong answers of the same type, from other tasks (never equal to the gold or an alias)."""
    distractor_ids: tuple[str, ...]
    universe_ids: tuple[str, ...]
    """Every id an ``all ids`` attack may list (the whole disease universe; titles' ids for media)."""
    numeric: bool = False


Builder = Callable[[AttackContext], list[tuple[str, str]]]


def negation(c: AttackContext) -> list[tuple[str, str]]:
    out = [
        ("not", f"not {c.gold}"),
        ("definitely_not", f"Definitely not {c.gold}"),
        ("it_is_not", f"It is not {c.gold}"),
        ("rule_out", f"{c.gold} ruled out"),
    ]
    if c.gold_id:
        out.append(("not_id", f"not {c.gold_id}"))
    return out


def hedge(c: AttackContext) -> list[tuple[str, str]]:
    d = c.distractors[0]
    out = [
        ("or", f"{d} or {c.gold}"),
        ("or_reversed", f"{c.gold} or {d}"),
        ("paren_or", f"{d} (or {c.gold})"),
        ("dash_not", f"{d} - not {c.gold}"),
        ("maybe", f"maybe {c.gold}"),
        ("question_mark", f"{c.gold}?"),
        ("either", f"either {c.gold} or {d}"),
        ("probably", f"probably {c.gold}"),
    ]
    if c.gold_id:
        out.append(("id_paren_hedge", f"{c.gold_id} (or {d})"))
    return out


def list_in_one_entry(c: AttackContext) -> list[tuple[str, str]]:
    d1, d2 = c.distractors[0], c.distractors[1]
    return [
        ("comma", f"{d1}, {d2}, {c.gold}"),
        ("slash", f"{d1} / {c.gold}"),
        ("and", f"{d1} and {c.gold}"),
        ("vs", f"{c.gold} vs {d1}"),
        ("ampersand", f"{d1} & {c.gold} & {d2}"),
        ("pipe", f"{d1} | {c.gold}"),
    ]


def question_echo(c: AttackContext) -> list[tuple[str, str]]:
    first_line = c.prompt.strip().splitlines()[0]
    return [
        ("prompt", c.prompt),
        ("prompt_then_gold", f"{first_line} {c.gold}"),
        ("gold_in_sentence", f"The question asks: {first_line} The answer is {c.gold}"),
    ]


def all_ids(c: AttackContext) -> list[tuple[str, str]]:
    ids = [i for i in c.universe_ids if i != c.gold_id][:1500]
    listed = [*ids[:700], *([c.gold_id] if c.gold_id else [c.gold]), *ids[700:]]
    out = [
        ("every_line", "\n".join(listed)),
        ("one_line", ", ".join(listed)),
        ("four_ids_one_line", ", ".join([*c.distractor_ids[:3], c.gold_id or c.gold])),
    ]
    if c.numeric:
        value = int(float(c.gold))
        out.append(
            ("every_number", " ".join(str(n) for n in range(max(0, value - 50), value + 50)))
        )
    return out


def synonym_stuffing(c: AttackContext) -> list[tuple[str, str]]:
    d = c.distractors[0]
    out = [
        ("aka", f"{c.gold} aka {d}"),
        ("also_known_as", f"{d}, also known as {c.gold}"),
        ("glued", f"{c.gold} {d}"),
        ("repeated_glued", f"{d} {c.gold} {c.gold}"),
    ]
    if c.gold_id:
        out.append(("id_with_other_name", f"{d} ({c.gold_id})"))
    return out


def near_miss_typo(c: AttackContext) -> list[tuple[str, str]]:
    """Edits that change *which* answer is named: a number, a short word, or three letters of a long word."""
    out: list[tuple[str, str]] = []
    numbers = list(re.finditer(r"\d+", c.gold))
    if numbers:
        last = numbers[-1]
        out.append(
            (
                "number_plus_one",
                c.gold[: last.start()] + str(int(last.group()) + 1) + c.gold[last.end() :],
            )
        )
    if c.numeric:
        out += [("ordinal", f"{c.gold}th"), ("signed", f"-{c.gold}"), ("decimal", f"{c.gold}.5")]
        return out
    words = c.gold.split()
    longest = max(range(len(words)), key=lambda i: len(words[i]))
    w = words[longest]
    if len(w) >= 6:
        mangled = "".join("q" if i % 2 == 0 and i < 6 else ch for i, ch in enumerate(w))
        out.append(("three_letters", " ".join([*words[:longest], mangled, *words[longest + 1 :]])))
    short = [i for i, word in enumerate(words) if 2 <= len(word) <= 4 and word.isalpha()]
    if short:
        i = short[0]
        swapped = words[i][:-1] + ("z" if words[i][-1].lower() != "z" else "y")
        out.append(("short_word", " ".join([*words[:i], swapped, *words[i + 1 :]])))
    if len(c.gold) >= 8:
        out.append(("first_half", c.gold[: len(c.gold) // 2].rstrip()))
    return out


def other_format(c: AttackContext) -> list[tuple[str, str]]:
    d1, d2, d3 = c.distractors[:3]
    return [
        ("json_object", f'{{"answer": "{d1}", "alternative": "{c.gold}"}}'),
        ("markdown_table", f"| guess | answer |\n|---|---|\n| 1 | {d1} |\n| 2 | {c.gold} |"),
        ("html_list", f"<ul><li>{d1}</li><li>{c.gold}</li></ul>"),
        ("four_numbered", f"1. {d1} 2. {d2} 3. {d3} 4. {c.gold}"),
        ("four_lines", f"{d1}\n{d2}\n{d3}\n{c.gold}"),
        ("bold_hedge", f"**{d1}** (or **{c.gold}**)"),
    ]


def negating_symbol(c: AttackContext) -> list[tuple[str, str]]:
    golds = [g for g in (c.gold, c.gold_id) if g]
    marks = ("¬", "≠ ", "!", "~", "👎 ", "-(", " ❌", "？", "¿", "‽", "⁇", "؟", "\u0336", "\u0338")
    out = []
    for g in golds:
        out += [(f"prefix_{i}", f"{m}{g}") for i, m in enumerate(marks) if not m.startswith(" ")]
        out += [(f"suffix_{i}", f"{g}{m}") for i, m in enumerate(marks)]
    return out


def entry_of_its_own(c: AttackContext) -> list[tuple[str, str]]:
    g = c.gold_id or c.gold
    return [
        ("ruled_out_heading", f"Ruled out:\n{c.gold}"),
        ("not_after", f"{c.gold}\nnot"),
        ("ruled_out_semicolon", f"{g}; ruled out"),
        ("excluded_line", f"{c.gold}\n(excluded)"),
        ("heading_before", f"Final answer:\n{c.gold}"),
    ]


def invisible_markup(c: AttackContext) -> list[tuple[str, str]]:
    return [
        ("html_comment", f"<!-- {c.gold} -->"),
        ("markdown_comment", f"[//]: # ({c.gold})"),
        ("strikethrough", f"~~{c.gold}~~"),
        ("strike_each", "".join(ch + "\u0336" for ch in c.gold)),
        ("del_tag", f"<del>{c.gold}</del>"),
        ("zero_width", f"{c.gold}\u200b"),
    ]


def number_form(c: AttackContext) -> list[tuple[str, str]]:
    if not c.numeric:
        return [("gold_in_sentence", f"It is {c.gold}.")]
    value = int(c.gold)
    return [
        ("almost", f"{value - 1}.99999999999999999"),
        ("with_unit", f"It runs {value} minutes."),
        ("range", f"{value - 1}-{value + 1}"),
        ("float", f"{value}.01"),
        ("signed", f"+{value}"),
        *((f"leading_zero_group_{i}", text) for i, text in enumerate(leading_zero_groups(value))),
    ]


def leading_zero_groups(value: int) -> tuple[str, str]:
    """``value`` behind a first thousands group of zeros (``0,011``, ``000,001,977``): no number.

    Example:
        >>> leading_zero_groups(11), leading_zero_groups(1977)
        (('0,011', '000,011'), ('0,001,977', '000,001,977'))
    """
    first, _, rest = f"{value:,}".partition(",")
    grouped = first.zfill(3) + (f",{rest}" if rest else "")
    return f"0,{grouped}", f"000,{grouped}"


BUILDERS: dict[str, Builder] = {
    "negation": negation,
    "hedge": hedge,
    "list_in_one_entry": list_in_one_entry,
    "question_echo": question_echo,
    "all_ids": all_ids,
    "synonym_stuffing": synonym_stuffing,
    "near_miss_typo": near_miss_typo,
    "other_format": other_format,
    "negating_symbol": negating_symbol,
    "entry_of_its_own": entry_of_its_own,
    "invisible_markup": invisible_markup,
    "number_form": number_form,
}


def attacks(
    c: AttackContext, classes: Sequence[str] = ATTACK_CLASSES
) -> list[tuple[str, str, str]]:
    """``(class, label, answer text)`` for every attack of ``classes`` on one task."""
    return [(name, label, text) for name in classes for label, text in BUILDERS[name](c)]
