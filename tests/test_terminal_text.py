"""The terminal rule (:mod:`agentenv.terminal_text`): whatever a string holds, what is printed holds
no character outside the allow-list, reads back as the string it came from, and printable text is
shown as it is.

A decoder of the escapes is written here, apart from the module, so that the property checks the
promise (distinct strings print distinctly) and not the code's own idea of it.
"""

from __future__ import annotations

import ast
import re
import unicodedata
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from agentenv.terminal_text import code_points, control_at, terminal_text

HOSTILE = "\x1b]0;OWNED\x07\x1b[2J\x1b[2K\rwrote board/leaderboard.md\x1b[8m\u202e\x9b31m\x00\x7f"
SPACES = {
    chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Zs"
}  # drawn as blanks


def allowed(ch: str, keep: str = "") -> bool:
    """The allow-list, written from its definition: printable, a space, a zero-width (non-)joiner."""
    return ch.isprintable() or ch in SPACES or ch in "\u200c\u200d" or ch in keep


_HEX = {"x": 2, "u": 4, "U": 8}


def decode(shown: str) -> str:
    """Read :func:`terminal_text`'s output back: ``\\\\`` is a backslash, ``\\xhh``/``\\uhhhh``/
    ``\\Uhhhhhhhh`` (lower-case hex) a character, any other backslash itself."""
    out, i = [], 0
    while i < len(shown):
        ch = shown[i]
        if ch == "\\" and i + 1 < len(shown):
            after = shown[i + 1]
            if after == "\\":
                out.append("\\")
                i += 2
                continue
            width = _HEX.get(after)
            digits = shown[i + 2 : i + 2 + width] if width else ""
            if width and len(digits) == width and re.fullmatch("[0-9a-f]+", digits):
                out.append(chr(int(digits, 16)))
                i += 2 + width
                continue
        out.append(ch)
        i += 1
    return "".join(out)


# text rich in what matters: controls, bidi, backslashes, escape-like text, separators, astral
NASTY = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),
        st.characters(),  # surrogates too
        st.sampled_from(
            list("\\xuU0123456789abcdefABCDEF\x1b\x07\r\n\t\x9b\x85\x7f \u00a0")
            + ["\u202e", "\u2066", "\u200b", "\u200d", "\u2028", "\ufeff", "\U000e0041"]
        ),
    ),
    max_size=40,
)


@settings(max_examples=1500, deadline=None)
@given(NASTY)
@example(HOSTILE)
@example("\\x1b")
@example("\\\x1b")
@example("\\\\")
@example("C:\\new\\table")
def test_every_string_prints_safe_and_reads_back(text: str) -> None:
    shown = terminal_text(text)
    assert all(allowed(ch) for ch in shown), ascii(shown)
    assert decode(shown) == text  # hence distinct strings print distinctly


@settings(max_examples=500, deadline=None)
@given(NASTY)
def test_kept_layout_characters_pass_raw_and_the_rest_is_escaped(text: str) -> None:
    shown = terminal_text(text, keep="\n\t")
    assert all(allowed(ch, "\n\t") for ch in shown), ascii(shown)
    assert decode(shown) == text


@settings(max_examples=500, deadline=None)
@given(st.text(st.characters(codec="utf-8").filter(lambda c: allowed(c) and c != "\\")))
@example("café, 東京, Ünïcödé (2009) ✓ 👨\u200d👩\u200d👧")
def test_printable_text_without_a_backslash_is_unchanged(text: str) -> None:
    assert terminal_text(text) == text


@given(st.text(st.sampled_from("\\/abxuU01 fn\"'"), max_size=20))
def test_a_backslash_is_doubled_only_before_what_an_escape_starts_with(text: str) -> None:
    shown = terminal_text(text)
    assert decode(shown) == text
    if not re.search(r"\\(\\|x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8})", text):
        assert shown == text  # C:\new, a JSON body's \n: shown as written


def test_the_probes_strings_are_shown_not_obeyed() -> None:
    shown = terminal_text(HOSTILE)
    assert shown.startswith("\\x1b]0;OWNED\\x07\\x1b[2J") and "\\x0dwrote" in shown
    assert "\\u202e" in shown and "\\x9b" in shown and "\\x00\\x7f" in shown


@settings(max_examples=500, deadline=None)
@given(NASTY)
@example(HOSTILE)
def test_code_points_marks_every_unsafe_character_and_is_stable(text: str) -> None:
    marked = code_points(text)
    assert all(allowed(ch) for ch in marked), ascii(marked)
    assert code_points(marked) == marked
    if "\\" not in text:
        assert terminal_text(marked) == marked  # printed again: nothing escaped twice
    assert len(re.findall(r"<U\+[0-9A-F]{4,6}>", marked)) >= sum(not allowed(c) for c in text)


CONTROLS = {chr(c) for c in [*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029]} | set(
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)


@settings(max_examples=500, deadline=None)
@given(NASTY, st.sampled_from(["", "\t", "\n\t"]))
def test_control_at_finds_the_first_control_not_kept(text: str, keep: str) -> None:
    expected = next((i for i, c in enumerate(text) if c in CONTROLS and c not in keep), -1)
    assert control_at(text, keep) == expected


def test_the_module_imports_nothing_but_the_standard_librarys_re() -> None:
    """``import agentenv`` builds nothing: the helper every command prints through costs nothing."""
    import agentenv.terminal_text as module

    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    } | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported <= {"re", "annotations", "__future__"}, imported
