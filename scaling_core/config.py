"""Typed project settings, parsed from a plain mapping (``[tool.margin]``).

The core never reads files: the application layer loads ``margin.toml`` or
``pyproject.toml`` and passes the table here.  Unknown keys and bad values
become messages, never exceptions.
"""

from __future__ import annotations

from dataclasses import field, replace
from typing import Any

from scaling_core.diagnostics import CODES, Severity
from scaling_core.records import record

_SEVERITIES = {"error": Severity.ERROR, "warning": Severity.WARNING, "info": Severity.INFORMATION,
               "information": Severity.INFORMATION, "hint": Severity.HINT}  # fmt: skip
CHECK_FREQUENCIES = ("edit", "save", "manual")


@record
class Config:
    """Settings shared by ``margin check`` and the language server."""

    #: Relative tolerance of ``≈`` checks (0.05 is 5%).
    tolerance: float = 0.05
    #: Whether code spans such as `` `2 * 8 = 16` `` are checked.
    code_spans: bool = True
    #: Whether arithmetic in LaTeX math (``$2 \\cdot 3 = 6$``) is checked (off until it meets the zero-false-alarm bar).
    latex_math: bool = False
    #: Whether trusted code (```` ```python calc ````) may run.
    trust: bool = False
    #: Editors: a code lens on each heading with its problems, checks and share of concepts tested.
    coverage_lenses: bool = True
    #: Editors: an information diagnostic on each definition no problem tests.
    coverage_diagnostics: bool = False
    #: Globs of files to check when a folder is given.
    include: tuple[str, ...] = ("**/*.md",)
    #: Globs of files to skip when a folder is given (explicit files are always checked).
    exclude: tuple[str, ...] = ()
    #: Per-code severity overrides; ``None`` turns a code off.
    severity: dict[str, Severity | None] = field(default_factory=dict)
    #: When the editor re-checks: on every edit, on save, or on request.
    check_frequency: str = "edit"
    #: Largest sweep (array) a statement may build.
    max_array_elements: int = 1_000_000
    #: Sweep elements one analysis (with the drafts it imports) may compute in all; None: 20 × max_array_elements.
    max_total_elements: int | None = None
    #: Seconds one analysis (with the drafts it imports) may evaluate for; then E003 says where it stopped.
    analysis_time_limit: float = 20.0
    #: Extra or overriding chips: name -> {title, fields: {field: {value, source}}}.
    chips: dict[str, Any] = field(default_factory=dict)
    #: Remote measurement targets: name -> command. Accepted and validated; reserved for the
    #: measurement commands, which this version does not have yet.
    targets: dict[str, str] = field(default_factory=dict)


def config_from_mapping(table: dict[str, Any]) -> tuple[Config, list[str]]:
    """Build a :class:`Config` from a ``[tool.margin]`` table; return it and any problems."""
    problems: list[str] = []
    config = Config()
    for key, value in table.items():
        name = key.replace("-", "_")
        try:
            config = _apply(config, name, value)
        except (TypeError, ValueError, ArithmeticError) as error:  # ArithmeticError: a JSON number too big for a float
            problems.append(f"{key}: {error}")
        except KeyError:
            problems.append(f"unknown setting '{key}'")
    return config, problems


def _apply(config: Config, name: str, value: Any) -> Config:
    if name == "tolerance":
        number = float(_parse_percent(value))
        if not 0 <= number < 1:
            raise ValueError("must be a fraction between 0 and 1 (or a percentage like '5%')")
        return replace(config, tolerance=number)
    if name in ("code_spans", "trust", "latex_math", "coverage_lenses", "coverage_diagnostics"):
        if not isinstance(value, bool):
            raise TypeError("must be true or false")
        if name == "coverage_lenses":
            return replace(config, coverage_lenses=value)
        if name == "coverage_diagnostics":
            return replace(config, coverage_diagnostics=value)
        if name == "latex_math":
            return replace(config, latex_math=value)
        return replace(config, code_spans=value) if name == "code_spans" else replace(config, trust=value)
    if name in ("include", "exclude"):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise TypeError("must be a list of glob strings")
        globs = tuple(value)
        return replace(config, include=globs) if name == "include" else replace(config, exclude=globs)
    if name == "severity":
        return replace(config, severity=_severities(value))
    if name == "check_frequency":
        if value not in CHECK_FREQUENCIES:
            raise ValueError(f"must be one of {', '.join(CHECK_FREQUENCIES)}")
        return replace(config, check_frequency=value)
    if name in ("max_array_elements", "max_total_elements"):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:  # TOML's true is a Python int
            raise ValueError("must be a positive integer")
        if name == "max_total_elements":
            return replace(config, max_total_elements=value)
        return replace(config, max_array_elements=value)
    if name == "analysis_time_limit":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError("must be a number of seconds")
        if not value > 0:  # NaN too
            raise ValueError("must be a positive number of seconds")
        return replace(config, analysis_time_limit=float(value))
    if name in ("chips", "targets"):
        if not isinstance(value, dict):
            raise TypeError("must be a table")
        return replace(config, chips=value) if name == "chips" else replace(config, targets=value)
    raise KeyError(name)


def _parse_percent(value: Any) -> float:
    if isinstance(value, str) and value.strip().endswith("%"):
        return float(value.strip()[:-1]) / 100
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TypeError("must be a number")
    return float(value)


def _severities(value: Any) -> dict[str, Severity | None]:
    if not isinstance(value, dict):
        raise TypeError("must be a table of CODE = 'error' | 'warning' | 'info' | 'hint' | 'off'")
    result: dict[str, Severity | None] = {}
    for code, level in value.items():
        if code not in CODES:
            raise ValueError(f"unknown diagnostic code '{code}'")
        if level == "off":
            result[code] = None
        elif isinstance(level, str) and level in _SEVERITIES:
            result[code] = _SEVERITIES[level]
        else:
            raise ValueError(f"severity of {code} must be error, warning, info, hint or off")
    return result
