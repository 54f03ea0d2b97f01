"""The interpreter's two steps: evaluate a region into effects, apply effects to results and scope."""

from __future__ import annotations

from scaling_core import analyze_document
from scaling_core.config import Config
from scaling_core.document.effects import Effects, Imported
from scaling_core.document.incremental import RegionCache
from scaling_core.document.interpret import Interpreter
from scaling_core.document.regions import CalcRegion
from scaling_core.document.results import Binding
from scaling_core.document.scope import Scope
from scaling_core.expr import syntax as ast
from scaling_core.expr.lexer import tokenize, tokenize_lines
from scaling_core.expr.tokens import TokenKind
from scaling_core.expr.values import Limits
from scaling_core.hardware.records import hardware_records
from scaling_core.text import Span
from scaling_core.units.registry import default_registry


def no_imports(_statement: ast.Import) -> dict[str, Binding]:
    return {}


def interpreter(text: str) -> Interpreter:
    config = Config()
    return Interpreter(
        default_registry(), text, hardware_records(config), "d.md", config.tolerance, Limits(), no_imports
    )


def block(text: str) -> CalcRegion:
    lines, offset = [], 0
    for line in text.split("\n"):
        lines.append((offset, line))
        offset += len(line) + 1
    return CalcRegion(Span(0, len(text)), tuple(lines), True, -1)


def test_evaluating_changes_nothing_until_the_effects_are_applied() -> None:
    text = "a = 2 s\nb = a * 3\na = 5 s\nb == 6 s"
    it = interpreter(text)
    first = it.evaluate(block(text), it.scope)
    assert it.scope.top_level == {} and len(it.results.values) == 0
    assert [b.name for b in first.bindings] == ["a", "b", "a"]
    assert [d.code for d in first.diagnostics] == ["N008"]  # the second 'a', within the region
    assert [r.binding for r in first.references] == [first.bindings[0], first.bindings[1]]
    again = it.evaluate(block(text), it.scope)
    assert [c.status for c in again.checks] == [c.status for c in first.checks] == ["pass"]
    it.apply(first, 0, replayed=False)
    assert it.scope.top_level["a"] is first.bindings[2] and it.scope.top_level["b"] is first.bindings[1]
    assert len(it.results.values) == 3 and it.results.bindings == list(first.bindings)


def test_applying_replayed_effects_moves_them_and_resolves_outside_names_now() -> None:
    it = interpreter("x = 1 s\n" + "y = x * 2\n")
    it.apply(it.evaluate(CalcRegion(Span(0, 7), ((0, "x = 1 s"),), True, -1), it.scope), 0, replayed=False)
    effects = it.evaluate(CalcRegion(Span(8, 17), ((8, "y = x * 2"),), True, -1), it.scope)
    assert effects.owners == (None,) and effects.replayable
    x_now = it.scope.top_level["x"]
    it.apply(effects, 100)
    moved = it.results.references[-1]
    assert moved.span == Span(112, 113) and moved.binding is x_now
    assert it.results.values[-1].span == Span(108, 117) and it.scope.top_level["y"].span == Span(108, 109)


def test_imports_are_never_replayed_and_unknown_names_are() -> None:
    assert Effects(0, (), (), (), (), ()).replayable
    it = interpreter("z = nope")
    effects = it.evaluate(block("z = nope"), it.scope, quiet=True)
    # Evaluated quietly, an unknown name's error holds no names of the scope: its did-you-mean is
    # added after the analysis (names.suggest_names), so the error replays like any result.
    assert [(d.code, d.notes) for d in effects.diagnostics] == [("N001", ())] and effects.replayable
    cache = RegionCache()
    cache.begin(Config())
    cache.put(("key",), effects)
    assert cache.get(("key",)) is effects and cache.evaluated == 1
    imported = Effects(0, (), (), (), (), (), (Imported("other.md", {}, 0),))
    cache.put(("import",), imported)
    assert not imported.replayable and cache.get(("import",)) is None


def test_a_problem_scope_is_entered_fresh_and_imports_go_to_the_top_level() -> None:
    scope = Scope({})
    scope.enter("1")
    assert scope.local == {} and scope.problem == "1" and scope.current is scope.local
    scope.enter(None)
    assert scope.local is None and scope.current is scope.top_level


def test_definitions_and_imports_reach_the_scope_in_the_order_written() -> None:
    drafts = {"a.md": "```calc\nx = 1 s\n```\n"}

    def loader(_importer: str, target: str) -> tuple[str, str] | None:
        return (target, drafts[target]) if target in drafts else None

    later = analyze_document('```calc\nx = 2 s\nimport "a.md"\n```\n', "d.md", loader=loader)
    assert later.exports["x"].path == "a.md"
    earlier = analyze_document('```calc\nimport "a.md"\nx = 2 s\n```\n', "d.md", loader=loader)
    assert earlier.exports["x"].path == "d.md"
    assert [d.code for d in earlier.diagnostics] == ["N008"]


def test_lines_with_container_prefixes_are_joined_as_the_lexer_joins_lines() -> None:
    quoted = "> a = (1 +\n> b = 2\n> c = [3,\n> 4]"
    pieces = tuple((offset + 2, line[2:]) for offset, line in block(quoted).lines)
    tokens, problems = tokenize_lines(quoted, pieces, len(quoted))
    plain, _ = tokenize("a = (1 +\nb = 2\nc = [3,\n4]")
    kinds = [t.kind for t in tokens]
    assert not problems and kinds == [t.kind for t in plain]
    assert kinds.count(TokenKind.NEWLINE) == 2  # before 'b =' (it ends the open bracket) and before 'c ='
    assert tokens[-1].span == Span(len(quoted), len(quoted))


def test_one_run_of_lines_is_lexed_as_the_text_it_is() -> None:
    text = "a = 1\nb = 2"
    tokens, _ = tokenize_lines(text, block(text).lines, 99)
    assert tokens == tokenize(text)[0]  # the end of input ends the last line, not at 99
    assert tokenize_lines(text, (), 7)[0][0].span == Span(7, 7)


def test_what_regions_repeat_is_kept_once() -> None:
    """Owners of references that all resolve outside their region, and how a value converted to a unit is shown,
    are one object each however many regions hold them; a region's own definitions still own their references."""
    written = ["z = 3", *(f"x_{n} = {n} GB -> MB\ny_{n} = x_{n} * 2 + z\nw_{n} = z" for n in range(5))]
    written += ["w = z + z"] * 3
    text = "\n\n".join(written)
    it, at, effects = interpreter(text), 0, []
    for part in written:
        lines = tuple(
            (at + sum(len(row) + 1 for row in part.split("\n")[:n]), row) for n, row in enumerate(part.split("\n"))
        )
        effects.append(it.evaluate(CalcRegion(Span(at, at + len(part)), lines, True, -1), it.scope))
        it.apply(effects[-1], 0, replayed=False)
        at += len(part) + 2
    assert all(e.owners == (0, None, None) for e in effects[1:6])  # x_n is its block's own; z (twice) is not
    shown = [value.display_as for e in effects for value in e.values if isinstance(value.display_as, tuple)]
    assert len(shown) == 5 and all(pair is shown[0] for pair in shown) and shown[0][1] == "MB"
    outside = [e.owners for e in effects[6:]]
    assert outside[0] == (None, None) and outside[0] is outside[1] is outside[2]
