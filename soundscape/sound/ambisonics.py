"""Ambisonic encoding in AmbiX: ACN channel order, SN3D normalisation, no Condon–Shortley phase.

Y_n^m(θ, φ) = N_n^|m| · P_n^|m|(sin φ) · (cos mθ if m ≥ 0 else sin |m|θ), with
N_n^|m| = √((2 − δ_m0)·(n − |m|)!/(n + |m|)!) and no 1/√(4π), so W = 1
(docs/sources.md A7.6, after Nachbar et al. 2011). The traps noted there are
avoided: scipy's ``lpmv`` carries the (−1)^m Condon–Shortley phase, which is
removed here; ``python-acoustics``' ``sn3d`` has an extra 1/√(4π) and is not used.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import lpmv

__all__ = ["acn_channels", "sn3d_gains"]


def acn_channels(order: int) -> tuple[str, ...]:
    """Channel labels ``ACN0`` … ``ACN{(order+1)²−1}``."""
    return tuple(f"ACN{i}" for i in range((order + 1) ** 2))


def sn3d_gains(order: int, azimuth_deg: float, elevation_deg: float) -> np.ndarray:
    """AmbiX encoding gains of a plane wave from a direction.

    Parameters
    ----------
    order : int >= 0
        Ambisonic order (1: 4 channels, 3: 16 channels).
    azimuth_deg : float, degrees
        0 ahead, positive to the left.
    elevation_deg : float, degrees
        Positive up.

    Returns
    -------
    ndarray, shape ((order+1)²,)
        Gains in ACN order.
    """
    theta = math.radians(azimuth_deg)
    sin_phi = math.sin(math.radians(elevation_deg))
    gains = np.empty((order + 1) ** 2)
    for n in range(order + 1):
        for m in range(-n, n + 1):
            a = abs(m)
            norm = math.sqrt((2 - (m == 0)) * math.factorial(n - a) / math.factorial(n + a))
            legendre = (-1) ** a * lpmv(a, n, sin_phi)  # undo scipy's Condon–Shortley phase
            angular = math.cos(m * theta) if m >= 0 else math.sin(a * theta)
            gains[n * (n + 1) + m] = norm * legendre * angular
    return gains
