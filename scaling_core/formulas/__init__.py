"""The formula library: the standard scaling arithmetic, with units and sources."""

from __future__ import annotations

from scaling_core.formulas import axes, collectives, inference, roofline, training, transformer
from scaling_core.formulas.model import Formula, Param

#: Every formula by name.
LIBRARY: dict[str, Formula] = {
    f.name: f for module in (roofline, collectives, axes, transformer, training, inference) for f in module.FORMULAS
}

__all__ = ["LIBRARY", "Formula", "Param"]
