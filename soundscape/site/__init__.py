"""The place: the courtyard and its units, the placed orchestra, the listeners."""

from soundscape.site.courtyard import *  # noqa: F403  (the courtyard is the package's face)
from soundscape.site.courtyard import __all__  # noqa: F401
