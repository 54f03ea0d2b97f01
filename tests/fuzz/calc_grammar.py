"""A Hypothesis grammar of the calc language, and of the Markdown places it is written in.

Every operator, every callable (the built-ins, the formula library, the calls
answered by trusted code), units with prefixes and exponents, sweeps (empty,
mismatched, large), checks with tolerances, conversions, shapes, chip fields
and slices, with edge values: 0, ±inf, NaN (``0/0``), huge and tiny
magnitudes, long ``**`` chains and superscript exponents, deep nesting and
long flat chains.  Statements are placed in calc fences, hidden calc
comments, code spans (chains included), prose claims, inline values and
LaTeX math.  Mostly valid, sometimes broken: a fuzzer that only writes
well-formed drafts never reaches the recovery paths.
"""

from __future__ import annotations

from hypothesis import strategies as st

from scaling_core.config import Config
from scaling_core.hardware.records import hardware_records
from scaling_core.prelude import CALLABLES

#: Names a generated draft defines first, so expressions can read them (and some it never defines).
DEFINED = ("a", "b", "t", "m", "r", "big", "tiny", "n0", "s2", "sweep3", "chips")
PRELUDE = (
    "a = 3\n"
    "b = 2.5 GB\n"
    "t = 12 ms\n"
    "m = 80 GiB\n"
    "r = [1, 2, 4, 8]\n"
    "big = 1e300\n"
    "tiny = 5e-324\n"
    "n0 = 0\n"
    "s2 = 4 s²\n"
    "sweep3 = [1, 2, 3] ms\n"
    "chips = 8960\n"
)
UNKNOWN = ("nosuch", "bacth", "x", "B", "W", "K", "T_math", "π", "日本")

NUMBERS = (
    "0", "0.0", "1", "2", "3", "7", "10", "1.5", ".5", "5.", "1e3", "1E-3", "1e308", "1.7976931348623157e308",
    "1e309", "1e400", "1e-308", "5e-324", "1e-400", "2.2250738585072014e-308", "1_000_000", "1,680", "24,576",
    "50,331,648", "1,234.5", "8k", "70B", "3.48M", "15T", "4K", "9" * 40, "0" * 30 + "1", "123456789012345678901",
)  # fmt: skip

UNITS = (
    "s", "ms", "us", "µs", "μs", "ns", "min", "h", "day", "days", "week", "month", "year", "years", "seconds",
    "byte", "bytes", "B", "kB", "KB", "kiB", "KiB", "MB", "MiB", "GB", "GiB", "TB", "TiB", "PB", "bit", "Gb",
    "FLOP", "FLOPs", "FLOPS", "TFLOP", "PFLOP", "OP", "USD", "dollars", "cent", "W", "kW", "J", "Wh", "Hz", "bps",
    "%", "token", "tokens", "param", "chip", "chips", "step", "layer", "GPU", "element", "m", "kg", "K", "mol",
    "sceonds", "nosuchunit", "GB/s", "TB/s", "FLOP/s", "USD/h", "kW·h", "token/s", "byte/FLOP", "s^2", "s**2",
    "s^-1", "s**-1", "s²", "s⁻¹", "m³", "s" + "²" * 3, "s" + "⁹" * 30, "GB^101", "s^-101", "s^1.5",
)  # fmt: skip

SUPERSCRIPTS = ("²", "³", "⁻¹", "⁰", "¹⁰", "⁹⁹", "⁻⁹⁹⁹", "⁹" * 25, "⁹" * 400, "¹" + "⁰" * 310)
BINARY = (" + ", " - ", " * ", " / ", " ** ", " ^ ", "×", " · ", " ÷ ", " − ", "+", "-", "*", "/", "**")
COMPARE = (" == ", " ≈ ", " ~= ", " < ", " <= ", " > ", " >= ", " ≤ ", " ≥ ", " = ")
DTYPES = ("bf16", "f32", "fp8", "int4", "float64", "nf4")
CHIPS = tuple(sorted(hardware_records(Config())))
FIELDS = ("hbm_bw", "flops_bf16", "hbm", "ici_bw_oneway", "critical_intensity", "dcn_bw", "nosuch", "bytes")
SLICES = ('"4x4x4"', '"8x8"', '"2x2"', '"x"', '"1x1x1"', '"0x0"', '"99999x99999x99999"', '""')
FUNCTIONS = tuple(sorted(CALLABLES)) + ("sqr", "nosuchfunction")


def _names() -> st.SearchStrategy[str]:
    return st.sampled_from(DEFINED + UNKNOWN + ("s", "ms", "GB", "h", "token", "days"))


def leaf() -> st.SearchStrategy[str]:
    """A number (perhaps with a unit), a name, a chip field or a shape."""
    number = st.sampled_from(NUMBERS)
    with_unit = st.tuples(number, st.sampled_from(("", " ")), st.sampled_from(UNITS)).map("".join)
    chip_field = st.tuples(st.sampled_from(CHIPS + ("nosuchchip", "a")), st.sampled_from(FIELDS)).map(".".join)
    sliced = st.tuples(st.sampled_from(("tpu_v5p", "tpu_v4", "h100", "a")), st.sampled_from(SLICES)).map(
        lambda parts: f"{parts[0]}[{parts[1]}]"
    )
    slice_field = st.tuples(sliced, st.sampled_from(("chips", "ici_bw_oneway", "x", "nosuch"))).map(".".join)
    return st.one_of(number, with_unit, _names(), chip_field, slice_field, sliced)


def _call(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    args = st.lists(children, min_size=0, max_size=4).map(", ".join)
    return st.tuples(st.sampled_from(FUNCTIONS), args).map(lambda parts: f"{parts[0]}({parts[1]})")


def _shape(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    dims = st.lists(st.one_of(st.sampled_from(("8", "128", "0", "1e200", "2.5", "-1", "a")), children), max_size=4)
    shape = st.tuples(st.sampled_from(DTYPES), dims.map(", ".join)).map(lambda parts: f"{parts[0]}[{parts[1]}]")
    return st.tuples(shape, st.sampled_from(("", ".bytes", ".size", ".bits", ".nosuch"))).map("".join)


def _sweep(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    fixed = st.sampled_from(
        ("[]", "[1]", "[1, 2]", "[1, 2, 3]", "[0, 1e308]", "[1 s, 2 GB]", "range(0)", "range(5, 1)", "range(3)",
         "range(1, 10, 0)", "range(1e12)", "range(0, 1, 1e-300)", "range(-1e308, 1e308, 1e300)", "[r, r]",
         "[sweep3, r]", "range(4) ms", "[1, 2] s", "[[1, 2], [3]]")
    )  # fmt: skip
    built = st.lists(children, max_size=5).map(lambda items: "[" + ", ".join(items) + "]")
    return st.one_of(fixed, built)


def expressions(max_leaves: int = 12) -> st.SearchStrategy[str]:
    """An expression of the calc language (unparenthesised where precedence makes it read differently)."""

    def extend(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        binary = st.tuples(children, st.sampled_from(BINARY), children).map("".join)
        return st.one_of(
            binary,
            binary,
            children.map(lambda e: f"({e})"),
            children.map(lambda e: f"-{e}"),
            children.map(lambda e: f"−({e})"),
            st.tuples(children, st.sampled_from(SUPERSCRIPTS)).map(lambda p: f"({p[0]}){p[1]}"),
            st.tuples(children, st.sampled_from(UNITS)).map(lambda p: f"({p[0]}) {p[1]}"),
            st.tuples(children, st.sampled_from(UNITS)).map(lambda p: f"({p[0]} -> {p[1]})"),
            _call(children),
            _shape(children),
            _sweep(children),
        )

    return st.recursive(leaf(), extend, max_leaves=max_leaves)


def pathological() -> st.SearchStrategy[str]:
    """Long or deep expressions: flat chains, ``**`` towers, nesting, long digit runs."""
    count = st.one_of(st.integers(1, 70), st.integers(300, 3000))  # short, and past Python's recursion limit
    return st.one_of(
        count.map(lambda n: " + ".join(["1"] * n)),
        count.map(lambda n: "*".join(["1.0001"] * n)),
        count.map(lambda n: " - ".join(["a"] * n)),
        count.map(lambda n: "/".join(["2"] * n)),
        count.map(lambda n: "**".join(["1"] * n)),
        count.map(lambda n: "2" + "**2" * n),
        count.map(lambda n: "2 ** " + "-" * n + "1"),
        count.map(lambda n: "-" * n + "1"),
        count.map(lambda n: "(" * n + "1" + ")" * n),
        count.map(lambda n: "sqrt(" * n + "4" + ")" * n),
        count.map(lambda n: "[" * n + "1" + "]" * n),
        count.map(lambda n: "2" + "⁹" * n),
        count.map(lambda n: "1 s" + "²" * n),
        count.map(lambda n: "9" * n + "e" + "9" * (n % 7)),
        count.map(lambda n: "[" + ", ".join(["r"] * n) + "]"),
        count.map(lambda n: "max(" + ", ".join(["sweep3"] * n) + ")"),
        count.map(lambda n: "3 " + "*".join(["ms"] * n)),
        count.map(lambda n: "1 / (" + " * ".join(["GB"] * n) + ")"),
    )


def any_expression() -> st.SearchStrategy[str]:
    """Mostly ordinary expressions, sometimes pathological ones."""
    return st.one_of(expressions(), expressions(), expressions(), pathological())


def statements() -> st.SearchStrategy[str]:
    """One calc statement: definition, value, check (with tolerance), conversion, import — or broken."""
    expr = any_expression()
    tolerance = st.sampled_from(("", " ± 5%", " +- 2 ms", " ± 0%", " ± 1e400%", " ± [1, 2, 3]", " ± a", " ± 1 GB"))
    convert = st.one_of(st.just(""), st.sampled_from(UNITS).map(lambda u: f" -> {u}"))
    name = st.sampled_from(("x", "y", "a", "r", "t", "B", "h100", "import", "μ", "_x1"))
    return st.one_of(
        st.tuples(name, st.just(" = "), expr, convert).map("".join),
        st.tuples(expr, convert).map("".join),
        st.tuples(expr, st.sampled_from(COMPARE), expr, tolerance).map("".join),
        st.sampled_from(('import "other.md"', 'import "/etc/passwd"', 'import ""', "x = ", "= 3", "3 +* 4", "((1")),
        st.tuples(expr, st.just("  # margin: ignore")).map("".join),
    )


def _claim(expr: str, number: str, op: str) -> str:
    return f"About {number}<!-- {op.strip() or '='} {expr} -->."


def documents() -> st.SearchStrategy[str]:
    """A Markdown draft: a prelude of definitions, then calc statements in every place they can be written."""
    statement = statements()
    expr = any_expression()
    block = st.lists(statement, min_size=1, max_size=6).map("\n".join)
    claim_number = st.sampled_from(("3 ms", "22 days", "0", "1e308 s", "2e-300 ms", "16 GiB", "5×", "1.5 trillion"))
    piece = st.one_of(
        block.map(lambda b: f"```calc\n{b}\n```\n"),
        block.map(lambda b: f"<!-- calc\n{b}\n-->\n"),
        st.tuples(expr, st.sampled_from(COMPARE), expr).map(lambda p: f"Inline `{''.join(p)}`.\n"),
        st.lists(expr, min_size=2, max_size=4).map(lambda links: "A chain `" + " = ".join(links) + "`.\n"),
        st.tuples(expr, claim_number, st.sampled_from(COMPARE)).map(lambda p: _claim(*p) + "\n"),
        expr.map(lambda e: f"Inline value {{calc}}`{e}`.\n"),
        st.tuples(expr, expr).map(lambda p: f"Math ${p[0]} = {p[1]}$.\n"),
        st.just("**Question 1 [edge]:** what is it?\n"),
        st.just("<details>\n\n"),
        st.just("</details>\n"),
        st.just("## A heading\n"),
    )
    body = st.lists(piece, min_size=1, max_size=6).map("\n".join)
    return body.map(lambda b: f"```calc\n{PRELUDE}```\n\n{b}")
