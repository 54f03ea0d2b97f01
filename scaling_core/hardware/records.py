"""Chip records as the calc language sees them: the packaged catalog plus the project's chips."""

from __future__ import annotations

from functools import lru_cache

from scaling_core.config import Config
from scaling_core.expr.evaluator import EvaluationError, Evaluator
from scaling_core.expr.lexer import tokenize
from scaling_core.expr.parser import parse_claim_expression
from scaling_core.hardware.catalog import RawChip, Record, build_records, merge, packaged_chips, raw_chip
from scaling_core.units.arrays import quiet_arrays
from scaling_core.units.quantity import Quantity
from scaling_core.units.registry import default_registry


def evaluate_constant(text: str) -> Quantity | None:
    """Evaluate a catalog field written in the calc language (``"197 TFLOP/s"``)."""
    registry = default_registry()
    tokens, problems = tokenize(text)
    expr, _tolerance, problem = parse_claim_expression(tokens, registry.__contains__)
    if problems or problem or expr is None:
        return None
    evaluator = Evaluator(registry, lambda _name: None, list)
    try:
        with quiet_arrays():
            return evaluator.quantity(expr)
    except EvaluationError:
        return None


@lru_cache(maxsize=1)
def packaged_records() -> dict[str, Record]:
    """The packaged chips as records (built once; records are immutable)."""
    records, problems = build_records(packaged_chips(), evaluate_constant)
    if problems:
        raise RuntimeError(f"packaged hardware data is invalid: {problems}")
    return records


def _config_chips(config: Config) -> tuple[list[RawChip], list[str]]:
    chips, problems = [], []
    for name, entry in config.chips.items():
        chip, found = raw_chip(name, entry)
        problems += found
        if chip is not None:
            chips.append(chip)
    return chips, problems


def hardware_records(config: Config) -> dict[str, Record]:
    """The packaged chips plus the project's own (which add chips or override fields)."""
    if not config.chips:
        return packaged_records()
    chips, _problems = _config_chips(config)
    records, _problems = build_records(merge(packaged_chips(), chips), evaluate_constant)
    return records


def chip_problems(config: Config) -> list[str]:
    """What is wrong with the project's chip tables (reported as configuration errors)."""
    chips, problems = _config_chips(config)
    _records, found = build_records(tuple(chips), evaluate_constant)
    return problems + found
