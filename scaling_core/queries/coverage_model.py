"""What coverage reports: concepts, their status and the problems that test them, by section and file.

:mod:`scaling_core.queries.coverage` computes these from analyses; the
editor's views (:mod:`coverage_views`), the ``margin coverage`` reports and
the hover read them.
"""

from __future__ import annotations

from dataclasses import field
from enum import StrEnum

from scaling_core.document.results import ProblemStatus
from scaling_core.records import record
from scaling_core.text import Span


class ConceptKind(StrEnum):
    """What a concept is."""

    DEFINITION = "definition"
    FIELD = "chip field"
    SLICE = "slice"  # tpu_v5p["4x4x4"] used as a whole
    FORMULA = "formula"
    SECTION = "section"


class ConceptStatus(StrEnum):
    """Whether a concept is tested."""

    TESTED = "tested"  # a passing check (or a declaration) of some problem covers it
    FAILING = "failing"  # covered only by failing checks
    UNTESTED = "untested"  # no problem covers it


@record
class ProblemRef:
    """A problem that covers a concept (possibly in another file)."""

    path: str
    title: str
    line: int
    status: ProblemStatus
    #: Its checks: how many pass, of how many.
    passed: int = 0
    total: int = 0


@record
class Concept:
    """One concept of a draft, with its verdict."""

    name: str
    kind: ConceptKind
    path: str
    span: Span
    line: int
    status: ConceptStatus
    problems: tuple[ProblemRef, ...] = ()

    @property
    def covered(self) -> bool:
        """Whether some problem covers it (passing or not)."""
        return self.status != ConceptStatus.UNTESTED


@record
class SectionCoverage:
    """A section (heading to the next heading) and its own concepts and problems."""

    title: str  # "" for the text before the first heading
    level: int
    line: int
    span: Span
    concepts: tuple[Concept, ...]
    problems: tuple[ProblemRef, ...]

    @property
    def total(self) -> int:
        """How many concepts it introduces (its heading included)."""
        return len(self.concepts)

    @property
    def covered(self) -> int:
        """How many of them some problem covers."""
        return sum(c.covered for c in self.concepts)

    @property
    def percent(self) -> float:
        """Covered concepts in percent (100 with no concept)."""
        return percent(self.covered, self.total)

    @property
    def checks(self) -> int:
        """Checks in the problems of this section."""
        return sum(p.total for p in self.problems)

    def count(self, status: ProblemStatus) -> int:
        """How many of its problems have ``status``."""
        return sum(p.status == status for p in self.problems)


@record
class FileCoverage:
    """One draft's coverage, section by section."""

    path: str
    sections: tuple[SectionCoverage, ...]
    #: Declarations naming nothing known: (line, message).
    notes: tuple[tuple[int, str], ...] = ()

    @property
    def concepts(self) -> list[Concept]:
        """Every concept of the draft, in document order."""
        return [c for s in self.sections for c in s.concepts]

    @property
    def total(self) -> int:
        """How many concepts the draft introduces."""
        return sum(s.total for s in self.sections)

    @property
    def covered(self) -> int:
        """How many of them are covered."""
        return sum(s.covered for s in self.sections)

    @property
    def percent(self) -> float:
        """Covered concepts in percent."""
        return percent(self.covered, self.total)

    @property
    def problems(self) -> list[ProblemRef]:
        """Every problem of the draft."""
        return [p for s in self.sections for p in s.problems]


@record
class CoverageReport:
    """Coverage of several drafts, with a total."""

    files: tuple[FileCoverage, ...] = field(default_factory=tuple)

    @property
    def total(self) -> int:
        """Concepts in every draft."""
        return sum(f.total for f in self.files)

    @property
    def covered(self) -> int:
        """Covered concepts in every draft."""
        return sum(f.covered for f in self.files)

    @property
    def percent(self) -> float:
        """The total in percent (what ``--fail-under`` compares)."""
        return percent(self.covered, self.total)


def percent(part: int, whole: int) -> float:
    """``part`` of ``whole`` in percent; 100 when there is nothing to cover."""
    return 100.0 * part / whole if whole else 100.0
