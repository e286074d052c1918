"""Points and directions in the courtyard: one ``Vec3`` for every module.

Coordinates are metres, x east, y north, z up, from the middle of the front edge
of the hall (堂) at ground level (see ``docs/site.md``).
"""

from __future__ import annotations

__all__ = ["Vec3"]

Vec3 = tuple[float, float, float]
