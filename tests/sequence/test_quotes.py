"""A speech quote the voice cannot say is refused when the rite is sequenced, at its line of
the cue sheet, read as the render reads it; it used to be found only by the render, late,
naming instruments/voice.toml. A quote the check passes renders."""

from __future__ import annotations

import numpy as np
import pytest

from soundscape import cuesheet
from soundscape.errors import CueSheetError, InstrumentError, TextError
from soundscape.music.instruments import load_instrument
from soundscape.sequence.planner import perform_from_file
from soundscape.sound.notes import SynthVoice
from soundscape.sound.synth import params_of, voice

FIRST = 'quote = "請賓"\nspan = [526, 528]'  # speech_001: the 擯者's 請賓 in s05
ACCEPTED = ("; accepted: Han characters the middle-chinese reading reads (spaces and "
            "punctuation are passed over)")


def _sheet(folder, quote: str):
    """The bundled 大射 sheet with speech_001 saying ``quote``, and the quote's line."""
    text = cuesheet.bundled_path().read_text(encoding="utf-8")
    assert text.count(FIRST) == 1
    said = f'quote = "{quote}"'
    path = folder / "x.toml"
    path.write_text(text.replace(FIRST, f"{said}\nspan = [526, 528]"), encoding="utf-8")
    return path, text.split(FIRST)[0].count("\n") + 1


def _refusal(path, line: int, quote: str, problem: str) -> str:
    return (f"{path}:{line}: speech 'speech_001' quote={quote!r} cannot be said in the "
            f"middle-chinese reading: {problem}{ACCEPTED}")


def test_an_unsayable_quote_is_refused_at_its_line_when_sequenced(tmp_path):
    path, line = _sheet(tmp_path, "hello world")
    with pytest.raises(CueSheetError) as caught:
        perform_from_file(path, seed=0)
    assert str(caught.value) == _refusal(path, line, "hello world",
                                         "'hello', 'world' are not Han characters")
    # the render's own refusal, which came only once the rite was sequenced and rendering
    with pytest.raises(InstrumentError, match="phone 'hello' is not in instruments/voice"):
        voice.syllables(params_of(load_instrument("voice")), "hello world")


def test_a_quote_the_check_passes_is_said_by_the_voice(tmp_path):
    from soundscape.sequence.speech import phrase_phones

    path, _ = _sheet(tmp_path, "公升即席")
    rite = perform_from_file(path, seed=0)
    (event,) = [e for e in rite.events if e.cue == "speech_001"]
    assert event.lyric == "公升即席" and event.phones == phrase_phones("公升即席",
                                                                     "middle-chinese")
    heard = SynthVoice().bind(rite, 0)(event, rite.sources[event.source], sample_rate=16000,
                                       rng=np.random.default_rng(0))
    assert np.all(np.isfinite(heard)) and np.abs(heard).max() > 1e-3


@pytest.mark.parametrize(("quote", "reading", "problem"), [
    ("請賓", "middle-chinese", ""),
    ("命某為賓，「諾」。", "mandarin", ""),
    ("hello world", "middle-chinese", "'hello', 'world' are not Han characters"),
    ("請賓 ok", "middle-chinese", "'ok' is not a Han character"),
    ("。", "middle-chinese", "it holds no Han character"),
    ("請𪚥賓", "middle-chinese", "it does not read '𪚥' (reading middle-chinese: '𪚥' is not "),
    ("請𪚥賓", "mandarin", ""),
    ("奏狸首间若一", "middle-chinese", ""),  # a 简体 大射's: 间 is 間, whose 廣韻 form is 閒
])
def test_the_check_and_the_voice_agree(quote, reading, problem):
    """What the check passes, the voice says from the phones the sequencer gives it; what
    it refuses for want of a reading, the voice refused too (letters beside Han characters
    it passed over in silence: refused as well)."""
    from soundscape.sequence.speech import phrase_phones, unsayable

    found = unsayable(quote, reading)
    assert found.startswith(problem) and bool(found) is bool(problem)
    params = params_of(load_instrument("voice"))
    if not problem:
        assert voice.syllables(params, phrase_phones(quote, reading))
    elif "ok" not in quote:
        with pytest.raises((InstrumentError, TextError)):
            try:
                lyric = phrase_phones(quote, reading) or quote
            except TextError:  # the sequencer gives no phones: the voice reads the words
                lyric = quote
            voice.syllables(params, lyric)


@pytest.mark.parametrize("verb", [
    ("sequence", "-o", "x.json"),
    ("render", "--from", "s05", "--to", "s05", "-o", "x.wav"),
    ("midi", "-o", "x.mid"),
    ("play", "--from", "s05", "--to", "s05", "-o", "x.wav"),
])
def test_every_verb_that_sequences_refuses_it_before_any_work(tmp_path, soundscape_cli, verb):
    path, line = _sheet(tmp_path, "hello world")
    code, err = soundscape_cli(*verb, "--cues", str(path), cwd=tmp_path)
    assert code == 2, err
    assert _refusal(path, line, "hello world", "'hello', 'world' are not Han characters") \
        in err
    assert "render pass" not in err and sorted(p.name for p in tmp_path.iterdir()) == ["x.toml"]
