"""The leaderboard shows every user's string as inert text, and its labels and captions say what a run was.

Why: agent names and arguments, ``--tasks`` paths, reward names, env options, the title and the rest
of a ``summary.json`` are somebody's input. A path holding a backtick, two line breaks and a table
once forged a whole table in ``leaderboard.md``; ``<img onerror>`` went through live; ``x\\|``
split a row in Python-Markdown's tables; a label ``a$\\oops$b`` failed the plots (mathtext) and with
them the whole board. Here a hypothesis search feeds any string to every place a user's string goes
and parses the Markdown with real parsers (markdown-it-py, CommonMark with GFM tables; and
Python-Markdown where it is installed): the document has exactly the expected blocks and table
shape, the strings read back as the text they were, and no HTML, link, image, emphasis or code
node comes from them. Labels keep ``max_tokens`` and lose ``api_key`` and a URL's credentials; a
caption names non-default env options and tells a custom reward from the shipped preset.
"""

from __future__ import annotations

import importlib.util
import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentenv.evaluation import leaderboard as board_module
from agentenv.evaluation.leaderboard import LeaderboardError, markdown_board, write_leaderboard
from agentenv.evaluation.leaderboard_rows import (
    Entry,
    agent_label,
    env_caption,
    is_secret_arg,
    md_code,
    md_text,
    one_line,
    without_credentials,
)
from agentenv.evaluation.summary import Metric, Summary, TasksFile

CHECKSUM = "1d9c6a02e488d0354b2309e16130c58820a91ac2ce417e814c5964f9579a65ac"
STRICT = "e4289fece468a769898011c8067fad916e75f731b85e672bfb080606adaeae8d"
"""The fingerprint's reward hash of the shipped ``strict`` preset."""
FINGERPRINT = {
    "system_prompt": "19cce25fd5f4" * 5 + "abcd",
    "tools": "cb7d5dd293e8" * 5 + "abcd",
    "reward": STRICT,
    "grader": "media_search/2",
}
NASTY = [
    "t7/q.jsonl`\n\n| agent | a |\n|---|---|\n| my-agent | 0.99 |\n\n<!-- ",
    "<img src=x onerror=alert(1)>",
    "[t](http://x)",
    "![](http://pixel)",
    "x\\| 0.990 [0.950, 1.000]\\| 5",
    "a$\\oops$b",
    "`",
    "``a`` ` ",
    " x ",
    "\x1b]0;OWNED\x07\x1b[31mRED",
    "a\r\n\r\n# heading\n- item",
    "<http://x> www.x.com *em* _em_ **s** ~~del~~ ==mark== ++key++ {: .cls}",
    "[x]: http://defined\n[x]",
    "&lt; &#124; &amp; \\&",
    "\u202eevil\u2028next\u0085line",
    "#",
    "",
]
USER = st.one_of(
    st.sampled_from(NASTY),
    st.text(max_size=40),
    st.text(
        alphabet=st.sampled_from(
            list("`|\\<>[]()!*_~&#$=+-:;{}\"' \n\r\tax1") + ["\x1b", "\u2028"]
        ),
        max_size=30,
    ),
)
UNSAFE_TOKENS = {
    "html_inline",
    "html_block",
    "link_open",
    "image",
    "em_open",
    "strong_open",
    "s_open",
    "softbreak",
    "hardbreak",
}


def summary(agent: str = "oracle", accuracy: float = 1.0, **update) -> Summary:
    ci = Metric(mean=accuracy, ci_low=accuracy, ci_high=accuracy)
    base = Summary(
        env_id="MediaSearch-v0",
        env_version=0,
        package_version="0.1.0",
        corpus_checksums={"media": CHECKSUM},
        agent=agent,
        split="test",
        episodes=10,
        seed=0,
        reward_preset="strict",
        fingerprint=dict(FINGERPRINT),
        metrics={
            "accuracy": accuracy,
            "mean_reward": accuracy,
            "mean_tool_calls": 1.0,
            "mean_turns": 2.0,
            "invalid_action_rate": 0.0,
        },
        intervals={"accuracy": ci, "mean_reward": ci},
        component_means={"accuracy": accuracy},
        per_difficulty_accuracy={"easy": accuracy},
        wall_time_s=1.0,
        episodes_per_s=10.0,
    )
    return base.model_copy(update=update)


def entry(s: Summary) -> Entry:
    return Entry(s, Path("x/summary.json"), agent_label(s.agent, s.agent_args))


# ---------------------------------------------------------------------------- parsing


HAS_MARKDOWN_IT = importlib.util.find_spec("markdown_it") is not None
"""markdown-it-py (a CommonMark parser; GFM tables and strikethrough enabled) comes with rich."""
needs_markdown_it = pytest.mark.skipif(
    not HAS_MARKDOWN_IT, reason="markdown-it-py is not installed"
)


def _markdown_it():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable(["table", "strikethrough"])


def _texts(inline) -> str:
    """An inline token's text, asserting it is text alone (no markup of any kind)."""
    kinds = {child.type for child in inline.children}
    assert kinds <= {"text"}, kinds
    return "".join(child.content for child in inline.children)


def _check_markdown_it(md: str, title: str, env_id: str, group: list[Entry]) -> list[str]:
    """The document's blocks are: h1, h3, caption paragraph, a 7-column table of len(group) rows.

    Returns the caption's code spans.
    """
    tokens = _markdown_it().parse(md)
    assert [t.type for t in tokens if t.level == 0] == [
        "heading_open",
        "heading_close",
        "heading_open",
        "heading_close",
        "paragraph_open",
        "paragraph_close",
        "table_open",
        "table_close",
    ]
    for token in tokens:
        assert token.type not in UNSAFE_TOKENS, token
        for child in token.children or ():
            assert child.type not in UNSAFE_TOKENS, (child, md)
    h1, h3 = (tokens[i + 1] for i, t in enumerate(tokens) if t.type == "heading_open")
    assert _texts(h1) == one_line(title).strip(" ")
    assert _texts(h3) == one_line(env_id).strip(" ")
    caption = next(tokens[i + 1] for i, t in enumerate(tokens) if t.type == "paragraph_open")
    assert {c.type for c in caption.children} <= {"text", "code_inline"}
    rows: list[list[str]] = []
    for i, t in enumerate(tokens):
        if t.type == "tr_open":
            rows.append([])
        elif t.type in ("th_open", "td_open"):
            rows[-1].append(_texts(tokens[i + 1]))
    assert len(rows) == 1 + len(group) and all(len(r) == 7 for r in rows)
    assert [r[0] for r in rows[1:]] == [e.label.strip(" ") for e in group]
    return [c.content for c in caption.children if c.type == "code_inline"]


class _Tags(HTMLParser):
    """Python-Markdown's HTML, by element: tags seen, and the text of each table cell."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.cells: list[list[str]] = []
        self.headings: list[str] = []
        self._cell: list[str] | None = None
        self._heading: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "tr":
            self.cells.append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag in ("h1", "h3"):
            self._heading = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.cells[-1].append("".join(self._cell))
            self._cell = None
        elif tag in ("h1", "h3") and self._heading is not None:
            self.headings.append("".join(self._heading))
            self._heading = None

    def handle_data(self, data):
        for part in (self._cell, self._heading):
            if part is not None:
                part.append(data)


HAS_PYTHON_MARKDOWN = importlib.util.find_spec("markdown") is not None
"""Python-Markdown (mkdocs' parser) is not a dependency: checked where it is installed."""


def _check_python_markdown(md: str, title: str, env_id: str, group: list[Entry]) -> None:
    import markdown

    page = _Tags()
    page.feed(markdown.markdown(md, extensions=["tables"]))
    page.close()
    assert set(page.tags) <= {"h1", "h3", "p", "code", "table", "thead", "tbody", "tr", "th", "td"}
    assert page.tags.count("table") == 1 and page.tags.count("p") == 1
    assert page.headings == [one_line(title).strip(" "), one_line(env_id).strip(" ")]
    assert len(page.cells) == 1 + len(group) and all(len(r) == 7 for r in page.cells)
    assert [r[0] for r in page.cells[1:]] == [e.label.strip(" ") for e in group]


# ---------------------------------------------------------------------------- the search


@needs_markdown_it
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    agent=USER,
    arg_key=USER,
    arg_value=USER,
    path=USER,
    reward=USER,
    option=USER,
    title=USER,
    env_id=USER,
    split=USER,
)
def test_any_user_string_is_inert_text_in_the_markdown(
    agent, arg_key, arg_value, path, reward, option, title, env_id, split
) -> None:
    update = {
        "env_id": env_id,
        "split": split,
        "tasks_file": TasksFile(path=path, sha256="ab" * 32, count=3),
        "reward_preset": reward,
        "fingerprint": {**FINGERPRINT, "reward": "cd" * 32},
        "env_kwargs": {"reward": reward + ".json", "kinds": option, "max_turns": 3},
    }
    group = [
        entry(summary(agent, 1.0, agent_args={arg_key: arg_value}, **update)),
        entry(summary("oracle", 0.5, **update)),
    ]
    md = markdown_board({env_id: group}, title)
    codes = _check_markdown_it(md, title, env_id, group)
    # The caption's user strings are code spans that read back exactly (one line each).
    assert codes[0] == (one_line(path) or " ")  # an empty string is shown as a space in a span
    assert (one_line(reward) or " ") in codes and one_line(reward + ".json") in codes
    assert f"kinds={one_line(option)}" in codes or f"kinds={one_line(json.dumps(option))}" in codes
    if HAS_PYTHON_MARKDOWN:
        _check_python_markdown(md, title, env_id, group)


@pytest.mark.skipif(not HAS_PYTHON_MARKDOWN, reason="Python-Markdown is not installed")
@pytest.mark.parametrize("text", NASTY)
def test_python_markdown_reads_the_probe_strings_as_text(text) -> None:
    group = [entry(summary(text, 1.0, agent_args={"model": text})), entry(summary("oracle", 0.5))]
    _check_python_markdown(markdown_board({text: group}, text), text, text, group)


@given(st.text(alphabet=st.sampled_from(list("abcXYZ019 -=+.,()/:_")), max_size=30))
def test_plain_strings_pass_unchanged(text) -> None:
    """Letters, digits and ``-=+.,()/:`` pass as they are: the committed boards stay byte-identical."""
    if "==" in text or "++" in text or "_" in text:
        return
    assert md_text(text) == text
    if text and text[0] != " " and text[-1] != " ":
        assert md_code(text) == f"`{text}`"


@pytest.mark.parametrize(
    ("text", "markdown"),
    [
        ("a|b", "a&#124;b"),
        ("x\\|", "x&#92;&#124;"),
        ("<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;"),
        ("[t](http://x)", "&#91;t&#93;(http://x)"),
        ("![](http://pixel)", "&#33;&#91;&#93;(http://pixel)"),
        ("`code`", "&#96;code&#96;"),
        ("two\nlines\r\n\r\nthree", "two lines three"),
        ("max_tokens=16 _em_", "max_tokens=16 &#95;em&#95;"),
        ("phenotype-ranker", "phenotype-ranker"),
        ("bm25 (k=5)", "bm25 (k=5)"),
    ],
)
def test_md_text(text, markdown) -> None:
    assert md_text(text) == markdown


def test_md_code_fences_are_longer_than_any_backtick_run() -> None:
    assert md_code("a`b") == "``a`b``"
    assert md_code("```") == "```` ``` ````"
    assert md_code("x\n\n| fake |") == "`x | fake |`"


@needs_markdown_it
def test_the_probe_path_forges_no_table(tmp_path) -> None:
    """The probe's ``--tasks`` path: a backtick, a blank line, a table and ``<!--``."""
    path = "t7/q.jsonl`\n\n| agent | accuracy |\n|---|---|\n| my-agent | 0.990 |\n\n<!-- "
    s = summary(tasks_file=TasksFile(path=path, sha256="ab" * 32, count=5), split="custom")
    md = markdown_board({"MediaSearch-v0": [entry(s)]}, "agentenv leaderboard")
    assert md.count("\n| ") == 2  # the header and the one row: nothing else starts a table line
    assert "``t7/q.jsonl` | agent | accuracy | |---|---| | my-agent | 0.990 | <!-- ``" in md
    _check_markdown_it(md, "agentenv leaderboard", "MediaSearch-v0", [entry(s)])


# ---------------------------------------------------------------------------- labels


@pytest.mark.parametrize(
    "name",
    [
        "api_key",
        "apiKey",
        "API_KEY",
        "openai-api-key",
        "apikey",
        "token",
        "hf_token",
        "HF_TOKEN",
        "access_token",
        "authToken",
        "accesstoken",
        "password",
        "db_passwd",
        "client_secret",
        "secret",
        "auth",
        "authorization",
        "private_key",
        "cookie",
        "keys",
        "apikeys",
        "SECRETKEY",
        "passwords",
        "cookies",
        "creds",
        "github_pat",
        "jwt",
        "basic_auth",
        "x-api-key",
        "Authorization",
    ],
)
def test_secret_names_are_left_out(name) -> None:
    assert is_secret_arg(name)
    assert agent_label("llm", {name: "sk-live", "model": "m"}) == "llm (model=m)"


@pytest.mark.parametrize(
    "name",
    [
        "max_tokens",
        "max_new_tokens",
        "maxTokens",
        "return_token_ids",
        "token_budget",
        "tokenizer",
        "keyword",
        "monkey",
        "temperature",
        "base_url",
        "secretary_bird",
        "stop_token",
        "eos_token",
        "pad_token",
        "sort_key",
        "cache_key",
        "answer_key",
        "auth_mode",
    ],
)
def test_names_that_merely_contain_a_secret_word_stay(name) -> None:
    """``max_tokens=16`` changes scores: it was hidden because ``token`` is a substring of it."""
    assert not is_secret_arg(name)
    assert agent_label("llm", {name: "16"}) == f"llm ({name}=16)"


@given(st.lists(st.sampled_from(["api", "key", "token", "auth", "access", "max", "x"]), max_size=4))
def test_every_name_run_json_redacts_is_left_out_of_labels(words) -> None:
    """run.json and summary.json record :func:`~agentenv.evaluation.recorded_args.recorded_arg`;
    a label hides every argument they redact (its value is ``<redacted>``), and only those."""
    from agentenv.evaluation.recorded_args import REDACTED, recorded_arg

    name = "_".join(words)
    recorded = recorded_arg(name, "v")
    assert (recorded == REDACTED) == is_secret_arg(name)
    if name:
        assert (agent_label("llm", {name: str(recorded)}) == "llm") == is_secret_arg(name)


def test_a_redacted_value_is_left_out() -> None:
    assert agent_label("llm", {"x_credential_id": "<redacted>", "model": "m"}) == "llm (model=m)"
    assert agent_label("llm", {"odd_name": "<redacted>"}) == "llm"


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("http://alice:hunter2@127.0.0.1:18777/v1", "http://127.0.0.1:18777/v1"),
        ("https://u@h/v1", "https://h/v1"),
        ("https://a:b@c@host:1/p?q=1", "https://host:1/p?q=1"),
        ("http://h/v1?api_key=sk-1&max_tokens=5", "http://h/v1?api_key=redacted&max_tokens=5"),
        ("http://h/v1/a@b", "http://h/v1/a@b"),  # an @ in the path is no user information
        ("alice@example.com", "alice@example.com"),  # no URL
        ("x http://u:p@h y", "x http://h y"),
    ],
)
def test_url_credentials_are_cut_from_labels(value, shown) -> None:
    assert without_credentials(value) == shown


def test_url_credentials_reach_no_output(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    run = tmp_path / "llm"
    run.mkdir()
    s = summary(
        "llm",
        0.2,
        fingerprint=None,
        agent_args={"base_url": "http://alice:hunter2@127.0.0.1:18777/v1", "model": "gpt-x"},
    )
    (run / "summary.json").write_text(s.model_dump_json())
    out = tmp_path / "board"
    write_leaderboard([run], out)
    for name in ("leaderboard.md", "leaderboard.html"):
        text = (out / name).read_text()
        assert "hunter2" not in text and "alice" not in text
        assert "127.0.0.1:18777/v1" in text
    assert (
        board_module.load_entry(run).label
        == "llm (base_url=http://127.0.0.1:18777/v1, model=gpt-x)"
    )


# ---------------------------------------------------------------------------- plots


def test_plots_draw_labels_literally(tmp_path, monkeypatch) -> None:
    """``a$\\oops$b`` failed the whole board (mathtext: Unknown symbol); it is drawn as typed."""
    pytest.importorskip("matplotlib")
    from matplotlib.text import Text

    from agentenv.evaluation import leaderboard_plots

    runs = []
    for name, acc, calls in (("a$\\oops$b", 0.5, 1.0), ("$x^2$", 0.4, 0.0), ("oracle", 1.0, 2.0)):
        run = tmp_path / name.replace("/", "_").replace("\\", "_")
        run.mkdir()
        s = summary(name, acc, fingerprint=None, per_difficulty_accuracy={"$e$": acc})
        s.metrics["mean_tool_calls"] = calls
        (run / "summary.json").write_text(s.model_dump_json())
        runs.append(run)
    write_leaderboard(runs, tmp_path / "board")  # no ValueError
    assert (tmp_path / "board" / "accuracy_by_difficulty.png").is_file()

    figures = []
    monkeypatch.setattr(leaderboard_plots, "_png", lambda fig: figures.append(fig) or b"")
    groups = board_module.group_by_env([board_module.load_entry(r) for r in runs])
    leaderboard_plots.accuracy_vs_tool_calls(groups)
    leaderboard_plots.accuracy_by_difficulty(groups)
    shown = [t for fig in figures for t in fig.findobj(Text) if "$" in t.get_text()]
    assert {t.get_text() for t in shown} >= {"a$\\oops$b", "$x^2$", "$e$"}
    assert all(not t.get_parse_math() for t in shown)


def test_a_plot_that_fails_leaves_the_tables_written(tmp_path, monkeypatch) -> None:
    pytest.importorskip("matplotlib")
    run = tmp_path / "oracle"
    run.mkdir()
    (run / "summary.json").write_text(summary(fingerprint=None).model_dump_json())

    def broken(groups):
        raise ValueError("Unknown symbol")

    monkeypatch.setattr(board_module, "accuracy_by_difficulty", broken)
    out = tmp_path / "board"
    with pytest.raises(LeaderboardError, match="--no-plots") as err:
        write_leaderboard([run], out)
    assert "Unknown symbol" in str(err.value)
    assert (out / "leaderboard.md").is_file() and (out / "leaderboard.html").is_file()
    assert not list(out.glob("*.png"))
    assert write_leaderboard([run], tmp_path / "again", plots=False)


# ---------------------------------------------------------------------------- captions


def test_a_default_run_caption_is_as_before() -> None:
    caption = env_caption([entry(summary())])
    assert caption == (
        "split `test`, env version 0, corpus media `1d9c6a02e488`, reward preset strict, "
        "fingerprint system_prompt `19cce25fd5f4` tools `cb7d5dd293e8` reward `e4289fece468` "
        "grader `media_search/2`"
    )


def test_the_caption_names_env_options_that_differ_from_the_registered_defaults() -> None:
    lookup = summary(env_kwargs={"kinds": ["lookup"], "max_turns": 8, "retriever": "hybrid-minilm"})
    caption = env_caption([entry(lookup)])
    assert caption.startswith(
        'split `test`, env options `kinds=["lookup"]` `retriever=hybrid-minilm`, env version 0'
    )
    assert "max_turns" not in caption  # 8 is MediaSearch-v0's registered default
    longer = env_caption([entry(summary(env_kwargs={"max_turns": 30, "question_style": "5"}))])
    assert 'env options `max_turns=30` `question_style="5"`,' in longer  # the string "5", not 5
    odd = env_caption([entry(summary(env_kwargs={"k": "a`b\n\n<img src=x>"}))])
    assert "env options ``k=a`b <img src=x>``," in odd


def test_the_caption_tells_a_custom_reward_from_the_shipped_preset() -> None:
    custom = {**FINGERPRINT, "reward": "29a94208e2d3" + "0" * 52}
    mine = summary(fingerprint=custom, env_kwargs={"reward": "rw.json"})
    caption = env_caption([entry(mine)])
    assert "reward preset strict" not in caption
    assert (
        "custom reward `strict` from `rw.json` (definition `29a94208e2d3`, not the shipped preset "
        "of that name)"
    ) in caption
    named = env_caption([entry(summary(fingerprint=custom, reward_preset="mine"))])
    assert "custom reward `mine` (definition `29a94208e2d3`)" in named
    # `--reward strict` given by name, or a file that is the preset exactly: the preset.
    assert "reward preset strict," in env_caption([entry(summary(env_kwargs={"reward": "strict"}))])
    old = env_caption([entry(summary(fingerprint=None))])
    assert "reward `strict` (definition not recorded)" in old


def test_the_html_caption_is_the_same_text_escaped() -> None:
    from agentenv.evaluation.leaderboard_html import render_html

    s = summary(
        tasks_file=TasksFile(path="a`b\n<i>x</i>", sha256="ab" * 32, count=3), split="custom"
    )
    page = render_html({"MediaSearch-v0": [entry(s)]}, {}, "t")
    assert "custom tasks a`b &lt;i&gt;x&lt;/i&gt; (3 tasks, sha256 abababababab)" in page


def test_an_eval_with_a_reward_file_and_env_options_says_so(tmp_path) -> None:
    """End to end (3 episodes): a reward file naming itself ``strict`` and ``kinds=["lookup"]``."""
    from agentenv.cli.main import main

    reward = tmp_path / "rw.json"
    reward.write_text('{"preset": "strict", "name": "strict", "tool_call_cost": 0.5}')
    common = ["eval", "MediaSearch-v0", "--agent", "bm25", "--episodes", "3", "--no-progress"]
    argv = [*common, "--reward", str(reward), "--env-arg", 'kinds=["lookup"]']
    assert main([*argv, "--out", str(tmp_path / "mine")]) == 0
    assert main([*common, "--out", str(tmp_path / "plain")]) == 0
    write_leaderboard([tmp_path / "mine"], tmp_path / "b1", plots=False)
    write_leaderboard([tmp_path / "plain"], tmp_path / "b2", plots=False)
    mine = (tmp_path / "b1" / "leaderboard.md").read_text().splitlines()[4]
    plain = (tmp_path / "b2" / "leaderboard.md").read_text().splitlines()[4]
    assert mine.startswith('split `test`, env options `kinds=["lookup"]`, env version 0')
    assert f"custom reward `strict` from `{reward}` (definition `" in mine
    assert "not the shipped preset of that name" in mine
    assert plain.startswith("split `test`, env version 0") and "reward preset strict," in plain
