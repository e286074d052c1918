"""The kit page in a real browser (Debian's chromium driven by Playwright): jumping to a
section moves playback, the lit instruments are the Performance's at that moment,
captions change on time, and a 5.1 loop plays (downmixed) where ambisonics do not."""

from __future__ import annotations

from pathlib import Path

import pytest

from soundscape.kit.captions import captions
from tests.kit.browser import needs_chromium, open_kit, settle
from tests.kit.scenes import rite
from tests.kit.test_build import build

pytestmark = needs_chromium


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    root = tmp_path_factory.mktemp("web")
    kit = build(root, layouts=("stereo", "5.1", "foa"), programme_ids=("all",)).parent
    with open_kit(kit, root, ready="window.kit && window.kit.last !== null"
                  " && document.getElementById('audio').src.startsWith('blob:')") as tab:
        tab.evaluate("document.getElementById('audio').muted = true")
        yield tab


def _seek(page, seconds: float) -> dict:
    """Pause, seek the audio, and return what the page shows once it has seeked."""
    settle(page, """(t) => new Promise((done) => {
        const a = document.getElementById('audio');
        a.pause();
        a.addEventListener('seeked', () => requestAnimationFrame(() => done()), {once: true});
        a.currentTime = t; })""", seconds)
    state = page.evaluate("window.kit.last")
    dom = page.evaluate("[...document.querySelectorAll('.source.lit')]"
                        ".map((n) => n.dataset.source)")
    assert sorted(dom) == sorted(state["lit"])
    return state


def test_jumping_to_a_section_moves_playback(page):
    _seek(page, 0.5)
    page.evaluate("""() => { window.seekedAt = null; document.getElementById('audio')
        .addEventListener('seeked', (e) => { window.seekedAt = e.target.currentTime; },
                          {once: true}); }""")
    page.click("#timeline button[data-section=s2]")
    page.wait_for_function("window.seekedAt !== null")
    assert 4.0 <= page.evaluate("window.seekedAt") < 4.5
    page.wait_for_timeout(300)
    state = page.evaluate("({t: document.getElementById('audio').currentTime,"
                          " paused: document.getElementById('audio').paused})")
    assert 4.0 < state["t"] < 5.5 and not state["paused"]  # playing on from the section
    assert page.evaluate("document.querySelector('#timeline .current').dataset.section") == "s2"


# The scene: bells at 4.0 + 0.5 k (0.3 s, ringing into one span 4.0–6.8), the drum at
# 4.25, 5.25, 6.25 (0.2 s, shown 0.25 s), the singer 5.0–6.55, the three 負侯 at 1.0–1.5.
FUHOU = ["voice.fuhou.dahou", "voice.fuhou.can", "voice.fuhou.gan"]


@pytest.mark.parametrize(("seconds", "lit"), [
    (1.2, FUHOU), (4.1, ["east.bells"]), (5.1, ["east.bells", "gong.dashi"]),
    (5.3, ["east.bells", "gong.dashi", "west.drum"]), (7.0, [])])
def test_lit_instruments_are_the_performance_at_that_moment(page, seconds, lit):
    state = _seek(page, seconds)
    assert state["time"] == pytest.approx(seconds, abs=0.01)
    assert sorted(state["lit"]) == sorted(lit)
    # each sounding event of the Performance lights its source
    sounding = {e.source for e in rite().events if e.time <= seconds < e.end}
    assert sounding <= set(state["lit"])
    # stereo loudspeakers light when something they are fed sounds
    assert bool(state["speakers"]) == bool(lit)


def test_captions_change_on_time_while_playing(page):
    expected = captions(rite(), listener_at=None)
    before = _seek(page, 0.6)
    assert before["captions"] == ["樂人宿縣於阼階東\n(yueren · xuan)"]
    assert before["passage"] == "樂人宿縣於阼階東"
    settle(page, "() => document.getElementById('audio').play()")
    samples = []
    for _ in range(400):
        state = page.evaluate("window.kit.last")
        samples.append((state["time"], state["captions"]))
        if state["time"] > 1.6:
            break
        page.wait_for_timeout(10)
    page.evaluate("document.getElementById('audio').pause()")
    assert samples[-1][0] > 1.6, "playback did not advance"
    boundaries = {c.start for c in expected} | {c.end for c in expected}
    checked = 0
    for time, shown in samples:
        if min(abs(time - b) for b in boundaries) < 0.05:
            continue
        want = [c.text for c in expected if c.start <= time < c.end]
        # the page's captions are those of the zone's listener; only directions may differ
        assert [s.split(", from")[0] for s in shown] == [w.split(", from")[0] for w in want]
        checked += 1
    assert checked >= 5
    assert any("負侯: 諾" in shown for t, shown in samples if t > 1.05)
    assert all("負侯: 諾" not in shown for t, shown in samples if t < 0.95)


def test_screenshot_of_the_page(page, tmp_path):
    _seek(page, 5.3)
    path = Path(tmp_path) / "page.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000


def test_heard_from_offers_places_by_their_names(page):
    # it offered the places' ids (gong_wei, zhongting), which no visitor reads
    labels = page.evaluate("[...document.querySelectorAll('#zone option')]"
                           ".map((o) => [o.value, o.textContent])")
    assert labels == [["gong_wei", "公席 the duke's seat"], ["zhongting", "中庭 mid-court"]]


def test_a_named_loudspeaker_loop_plays_and_ambisonics_are_left_to_the_venue(page):
    labels = page.evaluate("[...document.querySelectorAll('#layout option')]"
                           ".map((o) => o.textContent)")
    assert labels == ["stereo", "5.1", "foa (venue)"]
    try:
        stereo = page.evaluate("document.getElementById('audio').src")
        page.select_option("#layout", "5.1")
        page.wait_for_function("""(old) => { const a = document.getElementById('audio');
            return a.dataset.file.endsWith('.5.1.wav') && a.src.startsWith('blob:')
                && a.src !== old && a.readyState >= 1; }""", arg=stereo)
        _seek(page, 4.0)
        settle(page, """() => new Promise((done) => {
            document.getElementById('audio').play().then(() => setTimeout(done, 600)); })""")
        state = page.evaluate("({t: document.getElementById('audio').currentTime,"
                              " error: document.getElementById('audio').error})")
        assert state["error"] is None and 4.2 < state["t"] < 6.0  # decoded and playing
        page.select_option("#layout", "foa")  # not playable: the zone's stereo loop plays
        page.wait_for_function("document.getElementById('audio').dataset.file"
                               ".endsWith('.stereo.wav')")
    finally:
        page.evaluate("document.getElementById('audio').pause()")
        page.select_option("#layout", "stereo")


def test_a_script_that_never_settles_fails_its_test_instead_of_stalling_the_run(page):
    from playwright.sync_api import Error

    with pytest.raises(Error, match="not settled within 200 ms"):
        settle(page, "() => new Promise(() => {})", ms=200)
