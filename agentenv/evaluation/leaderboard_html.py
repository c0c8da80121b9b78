"""The leaderboard as one self-contained HTML page: inline CSS and JS, plots as data URIs.

One file that opens anywhere (a browser, a CI artifact viewer, an email) and
needs no network: the tables sort on a click on any header (numbers by
value, text by name; a second click reverses), and the PNG plots are
embedded as base64. Every value from a summary is HTML-escaped; the caption's
strings are also kept on one line, their control characters shown as escapes
(:func:`~agentenv.evaluation.leaderboard_rows.one_line`).

Example:
    >>> "<table" in render_html({}, {}, "empty")
    False
"""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping, Sequence

from agentenv.evaluation.leaderboard_rows import (
    COLUMNS,
    PLOT_FILES,
    Entry,
    env_caption,
    one_line,
    row_cells,
)

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 72rem; padding: 0 1rem; color: #222; }
div.scroll { overflow-x: auto; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
p.caption { color: #555; font-size: 0.9rem; }
table { border-collapse: collapse; width: 100%; margin: 0.5rem 0 1.5rem; }
th, td { border-bottom: 1px solid #ddd; padding: 0.35rem 0.6rem; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
th { cursor: pointer; user-select: none; background: #f4f4f4; }
th[aria-sort="ascending"]::after { content: " \\25B2"; } th[aria-sort="descending"]::after { content: " \\25BC"; }
img { max-width: 100%; border: 1px solid #eee; }
"""

_JS = """
document.querySelectorAll("table.board").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, col) {
    th.addEventListener("click", function () {
      var down = th.getAttribute("aria-sort") !== "descending";
      table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", down ? "descending" : "ascending");
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[col].dataset.sort, y = b.cells[col].dataset.sort;
        var nx = parseFloat(x), ny = parseFloat(y);
        var c = (isNaN(nx) || isNaN(ny)) ? x.localeCompare(y) : nx - ny;
        return down ? -c : c;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
"""

_ALT = {
    PLOT_FILES[0]: "Accuracy against mean tool calls, per agent and env",
    PLOT_FILES[1]: "Accuracy per difficulty level, per agent and env",
}


def _sort_keys(entry: Entry) -> list[str]:
    s, m = entry.summary, entry.summary.metrics
    keys = [
        m.get("accuracy", 0.0),
        m.get("mean_reward", 0.0),
        m.get("mean_tool_calls", 0.0),
        m.get("mean_turns", 0.0),
        m.get("invalid_action_rate", 0.0),
        s.episodes,
    ]
    return [entry.label] + [repr(float(k)) for k in keys]


def _table(env_id: str, group: Sequence[Entry]) -> str:
    head = "".join(f'<th scope="col">{html.escape(c)}</th>' for c in COLUMNS)
    rows = []
    for entry in group:
        cells = "".join(
            f'<td data-sort="{html.escape(key, quote=True)}">{html.escape(text)}</td>'
            for text, key in zip(
                row_cells(entry.summary, entry.label, entry.verified),
                _sort_keys(entry),
                strict=True,
            )
        )
        rows.append(f"<tr>{cells}</tr>")
    caption = html.escape(env_caption(group, code=one_line, text=one_line))
    return (
        f'<h2 id="{html.escape(env_id, quote=True)}">{html.escape(env_id)}</h2>\n'
        f'<p class="caption">{caption}</p>\n'
        # a narrow window scrolls the table sideways instead of cutting its last column
        f'<div class="scroll"><table class="board"><thead><tr>{head}</tr></thead>\n<tbody>\n'
        + "\n".join(rows)
        + "\n</tbody></table></div>"
    )


def render_html(
    groups: Mapping[str, Sequence[Entry]], images: Mapping[str, bytes], title: str
) -> str:
    """The page: a title, one sortable table per env id, then the plots (if any)."""
    parts = [
        f"<h1>{html.escape(title)}</h1>",
        '<p class="caption">Click a column header to sort. Accuracy is shown with its 95% bootstrap '
        "interval.</p>",
    ]
    parts += [_table(env_id, group) for env_id, group in groups.items()]
    for name, data in images.items():
        uri = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
        alt = html.escape(_ALT.get(name, name), quote=True)
        parts.append(f'<h2>{html.escape(_ALT.get(name, name))}</h2>\n<img src="{uri}" alt="{alt}">')
    body = "\n".join(parts)
    return (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>{html.escape(title)}</title>\n'
        f"<style>{_CSS}</style>\n</head>\n<body>\n{body}\n<script>{_JS}</script>\n</body>\n</html>\n"
    )
