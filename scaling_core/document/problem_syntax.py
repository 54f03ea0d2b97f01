"""The surface syntax of problems: book-style lead-ins, answer blocks, MyST exercises and solutions.

``extract.py`` finds where each form is written; what they add up to (each
problem's extent) is decided document-wide by ``chunks.finalize``:

* a paragraph starting ``**Question N [title]:**``, ``**Question N: title:**``,
  ``**Problem N.**`` or ``**Exercise N:**`` starts a problem, and so does a MyST
  ``{exercise}`` directive fence;
* answer blocks (``<details>``…``</details>``, ``{% details %}``…``{% enddetails %}``,
  a ``{solution}`` directive fence) end it: the problem ends with its answer.
"""

from __future__ import annotations

import re

from scaling_core.document.regions import ProblemStart
from scaling_core.text import Span

#: A book-style problem's lead-in: ``**Question 3 [hard]:**``, ``**Problem 4.**``, and with a numbered
#: problem a title after a colon inside the bold, ``**Question 10: Fun with AllToAll:**``.
_BOLD_PROBLEM = re.compile(
    r"\*\*(?P<ident>(?:Question|Problem|Exercise)(?:\s+(?P<number>[\w.]+))?)\s*(?:\[(?P<bracket>[^\]]*)\])?"
    r"\s*(?::\s*(?P<title>[^*\r\n]*?[^*\s:]))?\s*:?\s*\*\*"
)
#: What opens and closes an answer block: ``<details>``/``</details>``, ``{% details %}``/``{% enddetails %}``.
_ANSWER_MARK = re.compile(
    r"(?P<close></details\s*>|\{%-?\s*enddetails\s*-?%\})|(?P<open><details\b|\{%-?\s*details\b)", re.I
)
_LINE_REST = re.compile(r"[^\r\n]*")
#: A MyST directive fence's info string: ``{note}``, ``{solution} kv-context``.
_DIRECTIVE = re.compile(r"\{(?P<name>[\w:-]+)\}\s*(?P<argument>.*)")
#: A directive option line: ``:label: kv-context``.
_OPTION = re.compile(r"\s*:(?P<key>[\w-]+):\s*(?P<value>.*?)\s*$")
#: Directives whose body is code or markup of another language, not Markdown text.
_OPAQUE = frozenset(
    (
        "code",
        "code-block",
        "code-cell",
        "sourcecode",
        "literalinclude",
        "math",
        "raw",
        "mermaid",
        "eval-rst",
        "graphviz",
    )
)


def bold_problem(raw: str, start: int, level: int) -> ProblemStart | None:
    """The problem a paragraph's first line ``raw`` (at offset ``start``) starts, if it is a lead-in."""
    stripped = raw.lstrip(" >\t")
    head = _BOLD_PROBLEM.match(stripped)
    if head is None or (head.group("title") and not any(c.isdigit() for c in head.group("number") or "")):
        return None  # a colon title needs a problem number: "**Problem: the memory wall**" is emphasis
    column = len(raw) - len(stripped)
    title_span = Span(start + column, start + column + head.end())
    ident = head.group("ident")
    title = (head.group("bracket") or head.group("title") or "").strip() or ident
    return ProblemStart(start, title_span, ident, title, level)


def answer_marks(chunk: str, base: int) -> list[tuple[bool, int]]:
    """Where answer blocks open (their start) and close (the end of the closing line) in ``chunk``."""
    found = []
    for match in _ANSWER_MARK.finditer(chunk):
        if match.group("open"):
            found.append((True, base + match.start()))
        else:
            rest = _LINE_REST.match(chunk, match.end())
            found.append((False, base + (rest.end() if rest else match.end())))
    return found


def directive(info: str) -> tuple[str, str] | None:
    """A MyST directive fence's (name, argument), or None for an ordinary fence."""
    match = _DIRECTIVE.fullmatch(info.strip())
    return (match.group("name").lower(), match.group("argument").strip()) if match else None


def reads_body(name: str) -> bool:
    """Whether a directive's body is Markdown text, read like any other (admonitions, exercises, ...)."""
    return name not in _OPAQUE


def exercise(argument: str, body: list[str], start: int, title_span: Span, level: int) -> ProblemStart:
    """The problem a MyST ``{exercise}`` fence starts: ``Exercise <label>``, titled by its argument."""
    label = ""
    for line in body:
        option = _OPTION.match(line)
        if option is None:
            break
        if option.group("key") == "label":
            label = option.group("value")
    ident = f"Exercise {label}" if label else "Exercise"
    return ProblemStart(start, title_span, ident, argument or ident, level)


def directive_options(body: list[str]) -> int:
    """How many of a directive body's first lines are options (``:label: x``), which are not its content."""
    count = 0
    for line in body:
        if _OPTION.match(line) is None:
            break
        count += 1
    return count
