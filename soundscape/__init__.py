"""soundscape: the sound of the 大射儀 (Great Archery Rite of the Yili), rebuilt from its text.

The flow is one-way: text → CueSheet → sequence → Performance → renderers
(MIDI, score, audio). See ``docs/architecture.md``.
"""

from soundscape.errors import SoundscapeError

__version__ = "0.1.0"
__all__ = ["SoundscapeError", "__version__"]
