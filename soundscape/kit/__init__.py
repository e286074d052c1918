"""The museum installation kit (issue 15): loop-safe programmes for a venue's own
loudspeakers, captions, show control, a manifest, a static web page, batch renders.

Modules, one concern each: ``programmes`` (what to play, from an editable TOML),
``speakers`` (loudspeaker layouts, az/el lists, the IEM AllRADecoder JSON format),
``loop`` (loop-safe rendering at a calibration level, files of ≤ 16 channels),
``captions`` (WebVTT / SRT), ``showcontrol`` (cue lists, OSC, MIDI Show Control,
schedules), ``player`` (cues sent against the wall clock), ``manifest``, ``web`` (the
static page), ``batch`` (process pool or Dask), ``plan`` (batch plans), ``build`` (the
whole kit). See docs/kit.md.
"""

from soundscape.errors import SoundscapeError

__all__ = ["KitError"]


class KitError(SoundscapeError):
    """Bad kit input: a programme file, a layout file, a schedule, a batch plan."""
