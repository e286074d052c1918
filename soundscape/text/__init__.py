"""The text: editions, variants, commentary, the glossary, and deriving cues from it."""

from soundscape.text.source import *  # noqa: F403  (the parsed text is the package's face)
from soundscape.text.source import __all__  # noqa: F401
