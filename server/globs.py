"""Glob patterns of ``include`` and ``exclude``, matched in time linear in the path.

A glob here has ``*`` (any characters but ``/``), ``**`` (any characters),
``**/`` (any number of folders, none included) and ``?`` (one character but
``/``); every other character stands for itself.  A pattern matches a whole
path (relative, with ``/`` separators).

A pattern from a configuration file is input like any other: translated to a
backtracking regex, ``*a*a*a*a*a*a*a*a*a*b`` against a long name takes
longer than the age of the universe.  So a pattern with more than
:data:`REGEX_STARS` stars runs as an automaton instead (the states of the
pattern that the path so far can have reached, one step per character: time
linear in the path, whatever the pattern); a pattern with fewer stars, the
usual case (``**/node_modules``, ``drafts/old/**``, ``*.gen.md``), uses the
regex, whose backtracking is then bounded by a small power of the length.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

#: Patterns with at most this many stars use a regex; more, the automaton.
REGEX_STARS = 2
#: Transitions remembered per pattern before the table starts again (memory stays flat).
_MAX_TRANSITIONS = 4096

_CHAR, _NOT_SLASH, _ANY, _SPLIT, _MATCH = range(5)


def _tokens(pattern: str) -> list[str]:
    """The pattern cut into ``**/``, ``**``, ``*``, ``?`` and single characters."""
    out, index = [], 0
    while index < len(pattern):
        for token in ("**/", "**", "*", "?"):
            if pattern.startswith(token, index):
                break
        else:
            token = pattern[index]
        out.append(token)
        index += len(token)
    return out


def _regex(tokens: list[str]) -> re.Pattern[str]:
    parts = {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}
    return re.compile("".join(parts.get(t) or re.escape(t) for t in tokens) + r"\Z", re.DOTALL)


class _Automaton:
    """The pattern as a nondeterministic automaton, run as a lazily built deterministic one."""

    def __init__(self, tokens: list[str]) -> None:
        # Each state: [kind, character, next, other] (``other``: the second branch of a split).
        self.states: list[list[object]] = [[_MATCH, "", -1, -1]]
        follow = 0
        for token in reversed(tokens):
            follow = self._add(token, follow)
        self.start = self._closure({follow})
        self.transitions: dict[tuple[frozenset[int], str], frozenset[int]] = {}

    def _new(self, kind: int, char: str = "", to: int = -1, other: int = -1) -> int:
        self.states.append([kind, char, to, other])
        return len(self.states) - 1

    def _add(self, token: str, follow: int) -> int:
        if token in ("*", "**"):  # a loop: stay (one more character) or go on
            split = self._new(_SPLIT, to=follow)
            self.states[split][3] = self._new(_NOT_SLASH if token == "*" else _ANY, to=split)
            return split
        if token == "**/":  # optionally: any characters, then "/"
            slash = self._new(_CHAR, "/", follow)
            loop = self._new(_SPLIT, to=slash)
            self.states[loop][3] = self._new(_ANY, to=loop)
            return self._new(_SPLIT, to=follow, other=loop)
        if token == "?":
            return self._new(_NOT_SLASH, to=follow)
        return self._new(_CHAR, token, follow)

    def _closure(self, states: set[int]) -> frozenset[int]:
        """``states`` and every state a split leads to without reading a character."""
        stack, seen = list(states), set(states)
        while stack:
            kind, _char, to, other = self.states[stack.pop()]
            if kind == _SPLIT:
                for target in (to, other):
                    assert isinstance(target, int)
                    if target not in seen:
                        seen.add(target)
                        stack.append(target)
        return frozenset(seen)

    def _step(self, current: frozenset[int], char: str) -> frozenset[int]:
        reached = set()
        for state in current:
            kind, expected, to, _other = self.states[state]
            if kind == _ANY or (kind == _NOT_SLASH and char != "/") or (kind == _CHAR and char == expected):
                assert isinstance(to, int)
                reached.add(to)
        return self._closure(reached)

    def matches(self, path: str) -> bool:
        """Whether the whole of ``path`` matches (one table look-up per character, once warm)."""
        current = self.start
        table = self.transitions
        for char in path:
            found = table.get((current, char))
            if found is None:
                if len(table) >= _MAX_TRANSITIONS:
                    table.clear()
                found = table[(current, char)] = self._step(current, char)
            if not found:
                return False
            current = found
        return 0 in current


@functools.lru_cache(maxsize=1024)
def glob_matcher(pattern: str) -> Callable[[str], bool]:
    """A function telling whether a path matches ``pattern`` (see the module's docstring)."""
    tokens = _tokens(pattern)
    if sum(token.startswith("*") for token in tokens) <= REGEX_STARS:
        regex = _regex(tokens)
        return lambda path: regex.match(path) is not None
    return _Automaton(tokens).matches


def glob_matches(pattern: str, path: str) -> bool:
    """Whether ``path`` matches the glob ``pattern``, in time linear in the path."""
    return glob_matcher(pattern)(path)
