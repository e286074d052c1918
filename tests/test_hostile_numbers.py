"""Numbers without bounds and sheets the sequencer refuses: clear errors at FILE:LINE.

A sheet that loads but cannot be sequenced (a shooting piece bound to a step, a piece
whose parts no performer plays) is refused at the music cue's line, never with an
internal message; the sequencing options' numbers have ranges.
"""

from __future__ import annotations

import math

import pytest

from soundscape import cuesheet
from soundscape.errors import CueSheetError, PerformanceError, SiteError
from soundscape.music.tuning import default_tuning
from soundscape.sequence.planner import SequenceOptions, perform
from soundscape.site.courtyard import load_site
from tests.test_cuesheet import VALID

# The test sheet without its 簜, whose place between 笙磬 and 阼階 the site cannot fit.
_SHEET = VALID[:VALID.index('[[layout]]\nid = "pipes.dang"')] + VALID[VALID.index("[[music]]"):]


def _sequence(text: str) -> None:
    sheet = cuesheet.loads(text, source="mine.toml")
    perform(sheet, site=load_site(), tuning=default_tuning(), seed=0,
            options=SequenceOptions(soundscape=False))


def _music_line(text: str) -> int:
    return text[:text.index("[[music]]")].count("\n") + 1


def test_a_shooting_piece_bound_to_a_step_is_refused_at_its_cue():
    text = _SHEET.replace('piece = "sixia"', 'piece = "lishou"')
    with pytest.raises(CueSheetError) as caught:
        _sequence(text)
    message = str(caught.value)
    assert message.startswith(f"mine.toml:{_music_line(text)}: music 'sixia': ")
    assert "'lishou' is a shooting piece" in message and 'stop = "length"' in message
    assert "fill_seconds" not in message


def test_a_part_no_performer_plays_is_refused_at_its_cue():
    text = _SHEET.replace('piece = "sixia"', 'piece = "luming"').replace(
        'performers = ["east.shengqing", "gong"]', 'performers = ["east.shengqing"]')
    with pytest.raises(CueSheetError, match=rf"^mine.toml:{_music_line(text)}: music 'sixia'"
                                            r".*no performer plays 'se'"):
        _sequence(text)


def test_a_layout_entry_the_site_cannot_hold_is_named_at_its_line():
    line = VALID[:VALID.index('[[layout]]\nid = "pipes.dang"')].count("\n") + 1
    with pytest.raises(SiteError, match=rf"^mine.toml:{line}: layout 'pipes.dang': .* overlaps"):
        _sequence(VALID)


@pytest.mark.parametrize("seconds", [math.nan, math.inf, -1.0, 0.5, 1e308, 10**400])
def test_wusuan_seconds_has_a_range(seconds):
    with pytest.raises(PerformanceError, match=r"wusuan_seconds=.* must be a finite number "
                                               r"≥ 1 and ≤ 36000 seconds"):
        SequenceOptions(wusuan_seconds=seconds)


def test_the_sequence_command_refuses_nan_seconds(soundscape_cli, tmp_path):
    code, err = soundscape_cli("sequence", "--wusuan-seconds", "nan", "-o",
                               str(tmp_path / "p.json"), cwd=tmp_path)
    assert code == 2 and "'--wusuan-seconds': 'nan' is not a finite number" in err
    assert not (tmp_path / "p.json").exists()


@pytest.mark.parametrize(("verb", "option"), [("impulse", "--height"), ("show", "--start"),
                                              ("show", "--for")])
def test_float_options_refuse_nan(soundscape_cli, tmp_path, verb, option):
    """click's FloatRange lets NaN through (every comparison is false); ours does not."""
    extra = ("--source", "men", "-o", str(tmp_path / "ir.wav")) if verb == "impulse" else ()
    code, err = soundscape_cli(verb, option, "nan", *extra, cwd=tmp_path)
    assert code == 2 and f"'{option}': 'nan' is not a finite number" in err, err
    assert not list(tmp_path.iterdir())
