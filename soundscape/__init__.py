"""soundscape: the sound of the 大射儀 (Great Archery Rite of the Yili), rebuilt from its text.

The flow is one-way: text → CueSheet → sequence → Performance → renderers
(MIDI, score, audio). See ``docs/architecture.md``.

(The step between is :func:`perform`, not ``sequence``: ``soundscape.sequence`` is the
package that does it, and Python binds a subpackage over a function of that name the
moment it is imported.)

The public API is this module's: :func:`derive` a cue sheet from a text,
:func:`load_cues` a saved one, :func:`perform` it into a :class:`Performance`
(saved and loaded with ``save_json`` / ``Performance.load_json``) and :func:`render` that
heard from a place. The steps, on :data:`EXAMPLE_TEXT` (the 工 led up and 鹿鳴 sung
three times; the 大射's own 設樂 completes the orchestra)::

    >>> import soundscape
    >>> sheet = soundscape.derive(EXAMPLE_TEXT, rite="dashe")
    >>> [(cue.piece, cue.repeats) for cue in sheet.music]
    [('luming', 3)]
    >>> performance = soundscape.perform(sheet)
    >>> [(m.piece, round(m.start, 1)) for m in performance.music]
    [('luming', 113.1)]
    >>> sorted({performance.sources[e.source].instrument for e in performance.events
    ...         if e.cue == "luming"})
    ['se', 'voice']

Every error these raise is a :class:`SoundscapeError` naming the file, key or value.
Importing the package imports none of the heavy parts: each is loaded on first use.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from soundscape.errors import SoundscapeError

if TYPE_CHECKING:
    from soundscape.cuesheet import CueSheet
    from soundscape.performance import Performance
    from soundscape.site.listeners import Listener, ListenerPath
    from soundscape.sound.render import RenderResult

__version__ = "0.1.0"
__all__ = ["EXAMPLE_TEXT", "CueSheet", "Performance", "SoundscapeError", "__version__",
           "derive", "load_cues", "perform", "render"]

#: A short passage of the 大射儀 (江永《禮書綱目》's text, as bundled): the 工 are led up
#: with their 瑟 and 鹿鳴 is sung three times (歌鹿鳴三終). The examples derive, sequence
#: and render it: a whole rite takes tens of seconds to sequence.
EXAMPLE_TEXT = ("大射儀\n"
                "乃席工於西階上少東小臣納工工六人四瑟僕人正徒相大師僕人師相少師僕人士相"
                "上工相者皆左何瑟後首内弦挎越右手相後者徒相入小樂正從之升自西階北面東上坐"
                "授瑟乃降小樂正立於西階東乃歌鹿鳴三終\n")


def derive(text: str | Path | None = None, *, rite: str | None = None,
           text_id: str | None = None, chapter: str | None = None,
           drop_unmatched: bool = False) -> CueSheet:
    """The cue sheet of a Yili text: its sections, steps, orchestra, music and voice cues.

    Parameters
    ----------
    text : str, Path or None
        The text itself (a ``str``), a UTF-8 file of it (a ``Path``), or None for the
        bundled text of ``rite`` (the 大射儀 when ``rite`` is None too).
    rite : str or None
        A bundled rite (``dashe``, ``xiangyinjiu``, ``xiangshe``, ``yan``) whose site,
        layout and rules complete the sheet; None: the rite the text is recognised as
        by its content (``soundscape derive`` says how sure), if any.
    text_id : str or None
        The sheet's text id; None: the rite's id, else the file's stem, else ``text``.
    chapter : str or None
        For a text that is a book of several chapters: the one to derive, by its number
        (``"5"``, ``"五"``), words of its title (``"鄉射"``) or the line of its title
        (``"line 379"``); None: the one recognised as ``rite``. A book and neither is
        refused, its chapters listed.
    drop_unmatched : bool
        Set aside what the rite's own text does not hold (commentary or a translation no
        mark sets apart), as ``soundscape derive --drop-unmatched`` does; needs a rite.

    Examples
    --------
    >>> sheet = derive(EXAMPLE_TEXT, rite="dashe")
    >>> sheet.text.id, len(sheet.sections), sheet.music[0].piece
    ('dashe', 1, 'luming')
    >>> derive("no Han characters here")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    soundscape.errors.TextError: <text>: holds no Chinese text ...
    """
    from soundscape.errors import TextError
    from soundscape.text import source
    from soundscape.text.derive import derive as derive_sheet
    from soundscape.text.derive import rites
    from soundscape.text.derive.recognise import chapter_of, only_the_rite, recognise

    if rite is not None:
        rites.rite(rite)  # an unknown id is refused with the known ones
    if text is None:
        loaded = rites.load_rite_text(rite) if rite is not None else source.load_bundled()
        rite = rite or "dashe"
    elif isinstance(text, Path):
        loaded = source.load(text)
    else:
        loaded = source.parse(text, source="<text>")
    if text is not None:
        loaded, _ = chapter_of(loaded, chapter, rite)
    if rite is None:
        rite = recognise(loaded).rite
    if drop_unmatched:
        if rite is None:
            raise TextError(f"{loaded.source}: drop_unmatched needs a bundled rite; the text "
                            "is none (pass rite=)")
        loaded, _ = only_the_rite(loaded, rite)
    name = text_id or rite or (text.stem if isinstance(text, Path) else "text")
    title = rites.rite(rite).title if rite is not None else name
    return derive_sheet(loaded, text_id=name, title=title, rite=rite)


def load_cues(path: str | Path | None = None) -> CueSheet:
    """A cue sheet from its TOML file (``docs/cuesheet.md``), checked as it loads; None:
    the bundled 大射 sheet.

    >>> sheet = load_cues()
    >>> sheet.text.id, len(sheet.sections)
    ('dashe', 45)
    """
    from soundscape import cuesheet

    return cuesheet.load(path if path is not None else cuesheet.bundled_path())


def perform(cues: CueSheet | str | Path | None = None, *, seed: int = 0,
             from_section: str | None = None, to_section: str | None = None
             ) -> Performance:
    """Sequence a cue sheet into a :class:`Performance` on one clock: every step timed,
    the music played, the shooting simulated, every sound traced to its cue.

    Parameters
    ----------
    cues : CueSheet, str, Path or None
        A sheet (:func:`derive`, :func:`load_cues`), a sheet's file, or None for the
        bundled 大射 sheet (a whole rite takes some seconds).
    seed : int >= 0
        The same seed gives the same Performance.
    from_section, to_section : str or None
        Cut to these sections (``s18``, its name 樂賓 or heading 右樂賓), shifted to start
        at 0 (``Performance.cut``).

    Examples
    --------
    >>> performance = perform(derive(EXAMPLE_TEXT, rite="dashe"), seed=0)
    >>> [(s.id, s.name) for s in performance.sections]  # the 大射's own section, in any text
    [('s18', '樂賓')]
    >>> performance.duration > 60.0
    True
    >>> perform(derive(EXAMPLE_TEXT, rite="dashe"), seed=-1)
    Traceback (most recent call last):
    ...
    soundscape.errors.PerformanceError: seed=-1 must be a whole number >= 0
    """
    from soundscape.cuesheet import CueSheet
    from soundscape.music.tuning import default_tuning
    from soundscape.sequence.planner import perform
    from soundscape.site.courtyard import load_site
    from soundscape.text.derive.rites import rite_ids

    sheet = cues if isinstance(cues, CueSheet) else load_cues(cues)
    rite = sheet.text.id if sheet.text.id in rite_ids() else None  # its site: 鄉射 in the 序
    performance = perform(sheet, site=load_site(rite=rite), tuning=default_tuning(), seed=seed)
    return performance.cut(from_section, to_section)


def render(performance: Performance, path: str | Path, *,
           listener: str | Listener | ListenerPath = "gong_wei", layout: str = "stereo",
           court: str = "bare", seed: int = 0, sample_rate: int = 48000,
           **options: Any) -> RenderResult:
    """Render ``performance`` heard by ``listener`` to ``path`` (``.wav`` or ``.flac``),
    loudness-normalised (−23 LUFS), as ``soundscape render`` does.

    Parameters
    ----------
    listener : str, Listener or ListenerPath
        A place of the rite's site by id or Chinese name (``gong_wei`` or 公席, the duke's
        seat; ``soundscape plan`` shows them), ``x,y,z`` in metres, or a listener standing
        or walking anywhere.
    layout : str
        ``stereo``, ``binaural``, ``foa``, ``hoa3``, ``5.1``, ``7.1``, ``7.1.4`` …
        (``soundscape.sound.render.render_audio``).
    court : str
        The court's walls and echoes: ``bare``, ``damped`` or ``none`` (``docs/site.md``).
    options
        Passed on to ``render_audio`` (``target_lufs``, ``bits``, ``workers`` …).

    Examples
    --------
    Two seconds of the 瑟 and the singers, from the duke's seat:

    >>> import tempfile, soundfile
    >>> part = perform(derive(EXAMPLE_TEXT, rite="dashe"))
    >>> start = part.music[0].start
    >>> part = part.between(start, start + 2.0)
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     result = render(part, Path(folder) / "luming.wav", court="none")
    ...     info = soundfile.info(result.files[0])
    >>> info.channels, info.samplerate, info.duration >= 2.0  # and the notes' ring
    (2, 48000, True)
    >>> result.report.target_lufs
    -23.0
    """
    from soundscape.site.courtyard import load_site
    from soundscape.site.listeners import listener_at
    from soundscape.sound.court import load_court
    from soundscape.sound.propagation import Surroundings
    from soundscape.sound.render import SynthVoice, render_audio
    from soundscape.text.derive.rites import rite_ids

    rite = performance.info.text if performance.info.text in rite_ids() else None
    site = load_site(rite=rite)
    if isinstance(listener, str):
        listener = listener_at(site, listener)
    surroundings = (Surroundings() if court == "none"
                    else Surroundings(court=load_court(site, court)))
    options.setdefault("voice", SynthVoice(surroundings.reference_db))
    return render_audio(performance, path, listener=listener, layout=layout,
                        sample_rate=sample_rate, seed=seed, surroundings=surroundings,
                        **options)


def __getattr__(name: str) -> Any:
    """The classes of the API, imported when first asked for (``soundscape.Performance``)."""
    if name == "Performance":
        from soundscape.performance import Performance
        return Performance
    if name == "CueSheet":
        from soundscape.cuesheet import CueSheet
        return CueSheet
    raise AttributeError(f"module 'soundscape' has no attribute {name!r}")
