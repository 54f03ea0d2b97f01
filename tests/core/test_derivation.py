"""Derivations explain a value: formula, inputs, hardware sources, definitions."""

from __future__ import annotations

from scaling_core.document.session import CalcSession
from tests.cli.test_check_command import margin
from tests.conftest import ROOT


def test_allgather_derivation_shows_formula_inputs_sources_and_numbers() -> None:
    markdown = CalcSession().explain("allgather_time(bf16[1024, 4096].bytes, 4, tpu_v5e)").markdown
    assert "= **93.21 µs**" in markdown
    assert "allgather_time = Max(V/W_ici, X*t_hop/2)" in markdown
    assert "| V | `bf16[1024, 4096].bytes` | 8.389 MB |" in markdown
    assert "| W_ici | `tpu_v5e.ici_bw_bidi` | 90 GB/s — https://jax-ml.github.io/scaling-book/tpus/" in markdown
    assert "= max(4 × 1 µs / 2, 8.389 MB / 90 GB/s)" in markdown
    assert "Source: https://jax-ml.github.io/scaling-book/sharding/" in markdown


def test_derivation_follows_the_chain_of_definitions() -> None:
    session = CalcSession()
    markdown = session.explain(
        "N = 70e9\nD = 15e12\nC = 6 * N * D\nt = C / (8192 * h100.flops_bf16 * 0.4) -> days"
    ).markdown
    assert "`h100.flops_bf16` = 9.894e14 FLOP/s: https://www.nvidia.com/" in markdown
    assert markdown.index("`C = 6 * N * D`") < markdown.index("`N = 70e9`")
    assert "`D = 15e12`" in markdown


def test_defaults_are_shown_as_defaults() -> None:
    markdown = CalcSession().explain("kv_cache_bytes(64, 8, 128, 1)").markdown
    assert "| bytes_per_element | default `2 byte` | 2 bytes |" in markdown


def test_margin_eval_explain_prints_the_derivation() -> None:
    result = margin("eval", "--explain", "allgather_time(bf16[1024, 4096].bytes, 4, tpu_v5e)", cwd=ROOT)
    assert result.returncode == 0
    assert "allgather_time = Max(V/W_ici, X*t_hop/2)" in result.stdout


def test_derivation_at_a_document_offset_uses_the_scope_there() -> None:
    from scaling_core.document.derivation import derivation_at
    from tests.conftest import analyze

    text = (
        "```calc\nV = bf16[1024, 4096].bytes\nt = allgather_time(V, 4, tpu_v5e)\n```\n\n"
        "**Question 1:** local V\n\n```calc\nV = 1 GB\nt2 = allgather_time(V, 4, tpu_v5e)\n```\n"
    )
    analysis = analyze(text)
    top = derivation_at(analysis, text.index("t = allgather"))
    assert (
        top is not None
        and "= **93.2 µs** (93.21 µs)" in top
        and "`V = bf16[1024, 4096].bytes`" in top
        and "(line 2)" in top
    )
    local = derivation_at(analysis, text.index("t2 = "))
    assert local is not None and "`V = 1 GB`" in local and "(line 9)" in local
    assert derivation_at(analysis, text.index("**Question")) is None


def test_derivations_of_replayed_values_after_text_moved_them() -> None:
    # Typing above a block moves it; its replayed values are read again where they now are.
    from scaling_core import analyze_document
    from scaling_core.document.derivation import derivation_at
    from scaling_core.document.incremental import RegionCache

    text = "# Draft\n\n## Rooflines\n\n```calc\nV = bf16[1024, 4096].bytes\nt = allgather_time(V, 4, tpu_v5e)\n```\n"
    cache = RegionCache()
    analyze_document(text, "d.md", cache=cache)
    moved_text = text.replace("# Draft", "# Draft, now with a longer title")
    incremental = analyze_document(moved_text, "d.md", cache=cache)
    assert cache.reused >= 1
    fresh = analyze_document(moved_text, "d.md")
    offset = moved_text.index("t = allgather")
    assert derivation_at(incremental, offset) == derivation_at(fresh, offset)
    assert "= **93.2 µs** (93.21 µs)" in derivation_at(incremental, offset)  # type: ignore[operator]


def test_hover_on_a_value_defined_by_a_5000_term_flat_chain() -> None:
    from scaling_core.queries.hover import hover_at
    from tests.conftest import analyze

    chain = " + ".join(["1"] * 5000)
    text = f"```calc\nx = {chain}\ny = x * 2\n```\n"
    analysis = analyze(text)
    assert [v.display for v in analysis.values if v.name == "y"] == ["10000"]
    hovered = hover_at(analysis, text.index("y ="))
    assert hovered is not None and "**10000**" in hovered
    assert f"`x = {chain}` = 5000" in hovered  # the chain of definitions shows x as written
    own = hover_at(analysis, text.index("x ="))
    assert own is not None and own.startswith("**`x = 1 + 1 + 1") and "**5000**" in own


def test_hover_on_a_moved_5000_term_flat_chain_replayed_from_the_cache() -> None:
    from scaling_core import analyze_document
    from scaling_core.document.incremental import RegionCache
    from scaling_core.queries.hover import hover_at

    text = "# Draft\n\n```calc\nx = " + " + ".join(["1"] * 5000) + "\n```\n"
    cache = RegionCache()
    analyze_document(text, "d.md", cache=cache)
    moved_text = text.replace("# Draft", "# Draft, now longer")
    incremental = analyze_document(moved_text, "d.md", cache=cache)
    assert cache.reused >= 1
    hovered = hover_at(incremental, moved_text.index("x ="))
    assert hovered is not None and "**5000**" in hovered
    assert hovered == hover_at(analyze_document(moved_text, "d.md"), moved_text.index("x ="))
