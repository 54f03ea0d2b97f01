"""Editor settings over the project's configuration: names, client-only keys, validation.

An editor sends settings in camelCase (VS Code) or snake_case (Neovim), under
``margin`` or not; they override the project's config file key by key, except
what only the project decides (include/exclude globs, targets) and what both
add to (chips, severities).  Bad values are reported, never applied.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from scaling_core import Config, config_from_mapping
from scaling_core.hardware.records import chip_problems

_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")
#: Editor-side settings that configure the client, not the engine.
_CLIENT_ONLY = {"command", "trace", "workspaceTrusted", "workspace_trusted"}


def settings_to_config(base: Config, settings: Any) -> tuple[Config, list[str]]:
    """Editor settings (camelCase or snake_case, optionally under ``margin``) over the project config."""
    if not isinstance(settings, dict):
        return base, []
    table = settings.get("margin", settings)
    if table == []:  # an empty Lua table reaches us as a JSON array (Neovim's `margin = {}`)
        table = {}
    if not isinstance(table, dict):
        return base, ["settings must be an object"]
    merged: dict[str, Any] = {k: getattr(base, k) for k in ("tolerance", "code_spans", "trust", "check_frequency",
                                                            "max_array_elements", "latex_math", "coverage_lenses",
                                                            "coverage_diagnostics", "analysis_time_limit",
                                                            "max_total_elements") if getattr(base, k) is not None}  # fmt: skip
    merged.update({_CAMEL.sub("_", key).lower(): value for key, value in table.items()
                   if key not in _CLIENT_ONLY and value is not None})  # fmt: skip
    config, problems = config_from_mapping({k: list(v) if isinstance(v, tuple) else v for k, v in merged.items()})
    problems += chip_problems(config)  # the editor's own chips, checked as a config file's are (docs/configuration.md)
    return _with(base, config), problems


def _with(base: Config, editor: Config) -> Config:
    return replace(editor, include=base.include, exclude=base.exclude, chips={**base.chips, **editor.chips},
                   severity={**base.severity, **editor.severity}, targets=base.targets)  # fmt: skip
