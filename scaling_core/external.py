"""What the engine asks of trusted code, and how the answers come back.

The engine never runs a draft's Python.  A caller that may (``margin check``
in a trusted workspace, the language server when the editor trusts the
folder) hands the analysis a :class:`TrustedCode`: an object that runs the
draft's ```` ```python calc ```` blocks somewhere else (the analysis process,
``server/analysis/``) and answers questions about the functions they define.
Everything that crosses this boundary is plain data: cell sources in, reports
and numbers out.  Each answer is either a value or a reason why it is not
known; the engine turns a reason into a skipped check, never a failure.

The engine stays deterministic given the answers: the same program and the
same questions must get the same answers, so implementations cache them by
content (the program's :attr:`Program.digest`, the function's name, the
argument shapes and the JAX version).

Later steps (measurements on remote workers) add questions to the same
interface: a new ``kind`` of :meth:`TrustedCode.ask`.
"""

from __future__ import annotations

from dataclasses import field
from enum import StrEnum
from typing import Protocol

from scaling_core.records import record


@record
class Program:
    """The ```` ```python calc ```` blocks of one draft, in document order, run as one module."""

    #: Each block's code (without its fences), as written.
    cells: tuple[str, ...]

    @property
    def digest(self) -> str:
        """A content hash of the cells: equal digests, equal programs."""
        import hashlib  # only for drafts with python calc blocks (off the start-up path)

        hasher = hashlib.sha256()
        for cell in self.cells:
            hasher.update(len(cell).to_bytes(8, "little"))
            hasher.update(cell.encode("utf-8", "surrogatepass"))
        return hasher.hexdigest()[:32]


class Outcome(StrEnum):
    """How running one cell ended."""

    OK = "ok"
    #: The author's code raised: an error in the draft.
    ERROR = "error"
    #: Not the draft's fault: a module that is not installed, a deadline, the process died, no process.
    NOT_RUN = "not-run"


@record
class CellReport:
    """What happened when one cell ran."""

    outcome: Outcome
    #: One line: ``ZeroDivisionError: division by zero``, or why the cell did not run.
    message: str = ""
    #: The 1-based line, within the cell, of the last traceback frame in this cell (0: none).
    line: int = 0


@record
class ProgramReport:
    """The result of loading a :class:`Program`: one report per cell and the functions it defined."""

    cells: tuple[CellReport, ...]
    #: Top-level callables the cells defined (functions, ``jax.jit`` wrappers, lambdas).
    functions: frozenset[str] = frozenset()


@record
class ShapeArg:
    """An argument given as a shape: ``bf16[4096, 8192]`` is ``ShapeArg("bfloat16", (4096, 8192))``.

    ``dtype`` is JAX's name (:data:`JAX_DTYPES`), so the analysis process needs nothing of the engine.
    """

    dtype: str
    dims: tuple[int, ...]


#: Dtypes of shape literals that JAX has, by their calc-language spelling (``tf32`` and ``nf4`` have none).
JAX_DTYPES: dict[str, str] = {
    "f64": "float64", "fp64": "float64", "float64": "float64",
    "f32": "float32", "fp32": "float32", "float32": "float32",
    "bf16": "bfloat16", "bfloat16": "bfloat16", "f16": "float16", "fp16": "float16", "float16": "float16",
    "int32": "int32", "i32": "int32", "int16": "int16", "int8": "int8", "i8": "int8", "uint8": "uint8",
    "fp8": "float8_e4m3fn", "f8": "float8_e4m3fn", "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2",
    "int4": "int4", "i4": "int4", "fp4": "float4_e2m1fn",
}  # fmt: skip


@record
class Question:
    """One question about a function of a loaded program (see :data:`KINDS`)."""

    kind: str
    program: str
    function: str
    args: tuple[ShapeArg, ...]
    #: ``xla_cost`` only: a TPU topology to compile for as well (libtpu's name: ``"v5e:2x2"``); "" for none.
    target: str = ""


#: The questions the engine asks, with the fields each answer has (all numbers).
KINDS: dict[str, tuple[str, ...]] = {
    "xla_cost": ("flops", "dot_flops", "transcendentals", "bytes", "bytes_unfused"),
    "comm_bytes": ("all_gather", "reduce_scatter", "all_reduce", "all_to_all", "ppermute", "total"),
}
#: The fields an ``xla_cost`` with a TPU target adds (``server/analysis/tpu_aot.py``).
TPU_FIELDS = ("compiled_flops", "compiled_bytes", "xla_seconds")


@record
class Answer:
    """Numbers, each known or unknown with a reason, or a failure of the whole question."""

    values: dict[str, float] = field(default_factory=dict)
    #: Field -> why it is not known (a custom call, a dynamic loop ...).
    unknown: dict[str, str] = field(default_factory=dict)
    #: Set when the question could not be answered: ``(outcome, message)``.  ``Outcome.ERROR``
    #: is the author's code raising (the message names the last frame in it); ``NOT_RUN`` is anything else.
    failure: tuple[Outcome, str] | None = None


class TrustedCode(Protocol):
    """Runs a draft's Python elsewhere and answers questions about its functions."""

    def load(self, program: Program) -> ProgramReport:
        """Run the program's cells (once per digest: later calls answer from a cache)."""
        ...

    def ask(self, question: Question) -> Answer:
        """Answer a question about a function of a program :meth:`load` has run."""
        ...


__all__ = [
    "JAX_DTYPES",
    "KINDS",
    "TPU_FIELDS",
    "Answer",
    "CellReport",
    "Outcome",
    "Program",
    "ProgramReport",
    "Question",
    "ShapeArg",
    "TrustedCode",
]
