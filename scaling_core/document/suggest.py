"""Did-you-mean notes for unknown names, kept up to date across analyses instead of found anew each time.

An unknown name's note lists up to three names of its scope spelled alike
(``difflib``'s ratio of at least :data:`CUTOFF`).  Finding them means a
comparison with every name of the scope: on a draft with 20,000 names and an
author renaming a name (every keystroke changes the names, so nothing can be
remembered as it is), that is ~0.25 s per unknown name per keystroke.  A
:class:`ScopeNames` remembers, for each spelling it was asked about, the names
that pass (with their ratios); when the scope's names change it compares the
spelling with the added names only and drops the removed ones.  The notes are
exactly ``difflib.get_close_matches``'s: the same three tests per name, the
same ranking (``heapq.nlargest`` of ``(ratio, name)``).  A new spelling is
compared only with the names that pass the first two tests, found for all
names at once (``spelling_index.py``: ~9 ms -> ~2 ms per new spelling on a
draft of ~1,900 names; an author typing a claim's name makes one per keystroke).
"""

from __future__ import annotations

import heapq
import threading
from collections import OrderedDict
from collections.abc import Iterable
from difflib import SequenceMatcher

from scaling_core.document.spelling_index import SpellingIndex
from scaling_core.expr.values import CUTOFF

#: Scopes remembered, most recently used last (a scope: a draft's top level or one of its problems).
_SCOPES: OrderedDict[tuple[str, str | None], ScopeNames] = OrderedDict()
_SIZE = 64
_LOCK = threading.Lock()
#: Indexes of the latest sets of names (a draft's top level and chips, which its problems' scopes share).
_INDEXES: OrderedDict[frozenset[str], SpellingIndex] = OrderedDict()
_INDEXES_KEPT = 4
#: Fewer names than this are compared one by one (indexing costs about a comparison per name).
INDEXED = 64


class ScopeNames:
    """One scope's names and, per spelling asked about, the names close enough to it."""

    def __init__(self) -> None:
        self.names: frozenset[str] = frozenset()
        #: The names shared with other scopes (the top level's and the chips), indexed once for all of
        #: them, and the scope's own others.
        self.shared: frozenset[str] = frozenset()
        self.own: frozenset[str] = frozenset()
        self.passing: dict[str, list[tuple[float, str]]] = {}
        self.asked: set[str] = set()
        #: The notes given since the names last changed (a draft with hundreds of unknown names asks for
        #: each at every keystroke, and most keystrokes change no name).
        self.notes: dict[str, str | None] = {}

    def update(self, names: frozenset[str], shared: frozenset[str] | None = None) -> None:
        """The scope now has ``names`` (``shared``, a part of them, are other scopes' too): compare each
        remembered spelling with the added ones only."""
        if names == self.names:
            return
        self.notes = {}
        added, removed = names - self.names, self.names - names
        self.passing = {
            spelling: [p for p in passing if p[1] not in removed] + _passing(spelling, _close(spelling, added))
            for spelling, passing in self.passing.items()
            if spelling in self.asked  # spellings not asked about in the latest analysis are forgotten
        }
        self.asked = set()
        self.names = names
        self.shared = shared if shared is not None else names
        self.own = names - self.shared if shared is not None else frozenset()

    def note(self, spelling: str) -> str | None:
        """``did you mean 'a' or 'b'?`` for ``spelling``, or None when no name is close enough."""
        self.asked.add(spelling)
        if spelling in self.notes:
            return self.notes[spelling]
        passing = self.passing.get(spelling)
        if passing is None:
            candidates = _close(spelling, self.shared) + list(self.own)
            passing = self.passing[spelling] = _passing(spelling, candidates)
        best = heapq.nlargest(3, passing)
        note = self.notes[spelling] = (
            "did you mean " + " or ".join(f"'{name}'" for _ratio, name in best) + "?" if best else None
        )
        return note


def scope_names(
    path: str, problem: str | None, names: frozenset[str], shared: frozenset[str] | None = None
) -> ScopeNames:
    """The remembered scope of ``path`` (its top level, or ``problem``), brought up to date with ``names``
    (``shared``: those of them that other scopes have too, the top level's and the chips).

    Call under :func:`locked` (analyses may run in several threads).
    """
    key = (path, problem)
    scope = _SCOPES.get(key)
    if scope is None:
        scope = _SCOPES[key] = ScopeNames()
    _SCOPES.move_to_end(key)
    while len(_SCOPES) > _SIZE:
        _SCOPES.popitem(last=False)
    scope.update(names, shared)
    return scope


def locked() -> threading.Lock:
    """The lock that :func:`scope_names` and the notes it gives are used under."""
    return _LOCK


def _close(spelling: str, names: frozenset[str]) -> list[str]:
    """Those of ``names`` that may be close enough to ``spelling``: all of a few, else those that pass
    ``difflib``'s first two tests (from an index of ``names``, kept for the next spelling)."""
    if len(names) < INDEXED:
        return list(names)
    index = _INDEXES.get(names)
    if index is None:
        index = _INDEXES[names] = SpellingIndex(names)
        while len(_INDEXES) > _INDEXES_KEPT:
            _INDEXES.popitem(last=False)
    else:
        _INDEXES.move_to_end(names)
    return index.sharing(spelling)


def _passing(spelling: str, candidates: Iterable[str]) -> list[tuple[float, str]]:
    """The candidates close enough to ``spelling``, with their ratio (``get_close_matches``'s tests).

    The name itself is left out: defined where the use cannot see it,
    ``names.locate_unknown_names`` tells where.
    """
    matcher = SequenceMatcher()
    matcher.set_seq2(spelling)
    size = len(spelling)
    found = []
    for name in candidates:
        # real_quick_ratio from the lengths first (most names fail it), without a call.
        if name == spelling or 2.0 * min(size, len(name)) < (CUTOFF - 1e-9) * (size + len(name)):
            continue
        matcher.set_seq1(name)
        if matcher.real_quick_ratio() >= CUTOFF and matcher.quick_ratio() >= CUTOFF:
            ratio = matcher.ratio()  # worked out once (get_close_matches works it out once too)
            if ratio >= CUTOFF:
                found.append((ratio, name))
    return found
