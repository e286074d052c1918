"""Physical facts every layer uses, said once.

The speed of sound in dry air, c(T) = 331.3·√(1 + T/273.15) m/s (docs/sources.md A7.1):
the renderer propagates with it at the weather it is given; the sequencer times what
people hear across the court with it at the rite's default air (20 °C).
"""

from __future__ import annotations

import math

__all__ = ["DEFAULT_TEMPERATURE_C", "speed_of_sound"]

DEFAULT_TEMPERATURE_C = 20.0


def speed_of_sound(temperature_c: float = DEFAULT_TEMPERATURE_C) -> float:
    """Metres per second in dry air at ``temperature_c`` °C."""
    return 331.3 * math.sqrt(1.0 + temperature_c / 273.15)
