"""The rite on one clock: the planner, the timeline of steps, the players, the archery."""

from soundscape.sequence.planner import *  # noqa: F403  (the planner is the package's face)
from soundscape.sequence.planner import __all__  # noqa: F401
