"""The kit's loops and the batch's renders are heard in the court, as ``soundscape render``
is (``--court``, default bare): a late tail after a drum stroke, the hypothesis named in
the batch's loudness report and the kit's manifest."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf

from soundscape.kit import KitError
from soundscape.kit.batch import Job
from soundscape.kit.manifest import check_court, court_entry
from soundscape.kit.plan import load_plan
from soundscape.performance import Event, Performance, Source
from soundscape.site.courtyard import load_site
from soundscape.site.listeners import Listener
from soundscape.sound.court import source_point

AT = 0.2


def _stroke() -> Performance:
    """One hard 建鼓 stroke on the hall (the 工's mats), nothing else."""
    site = load_site()
    drum = Source("east.jiangu", "jiangu", "建鼓", "drum", "drums", source_point(site, "gong_xi"))
    return Performance.build([Event(AT, 0.5, drum.id, None, 1.0, "strike", "test")], [],
                             {drum.id: drum})


def _late_over_direct(path) -> float:
    """Energy 2-3.5 s after the stroke (the drum's own ring is 1.4 s long) over its first
    0.3 s (dB)."""
    audio, rate = sf.read(str(path), always_2d=True)
    mono = audio.mean(axis=1)
    onset = round(AT * rate)
    first = (mono[onset:onset + round(0.3 * rate)] ** 2).sum()
    late = (mono[onset + round(2.0 * rate):onset + round(3.5 * rate)] ** 2).sum()
    return 10 * np.log10(max(late, 1e-30) / first)


@pytest.mark.parametrize("kind", ["loop", "render"])
def test_a_kit_loop_and_a_batch_job_carry_the_court(tmp_path, kind):
    """The same stroke heard mid-court in the bare court rings on: its energy 2-3.5 s
    after the stroke, where the drum has died away, is over 20 dB nearer its first 0.3 s
    than without the walls."""
    seat = load_site().listener("zhongting")
    options = {"length_s": 8.0} if kind == "loop" else {}
    found = {}
    for court in ("bare", "none"):
        job = Job(f"{kind}.{court}", tmp_path / f"{kind}.{court}.wav",
                  Listener(seat.position, seat.facing), "stereo", kind=kind,
                  performance=_stroke(), options=options, court=court)
        result = job()
        found[court] = _late_over_direct(result.files[0])
        if kind == "render":
            report = json.loads(result.report_file.read_text(encoding="utf-8"))
            assert (report["court"] or {}).get("hypothesis") == \
                ("bare" if court == "bare" else None)
    assert found["bare"] > found["none"] + 20.0


def test_a_plan_takes_the_court_from_the_command_or_its_entry(tmp_path):
    plan = tmp_path / "plan.toml"
    plan.write_text('[[render]]\nid = "a"\n[[render]]\nid = "b"\ncourt = "none"\n',
                    encoding="utf-8")
    _, jobs = load_plan(plan, load_site())
    assert [j.court for j in jobs] == ["bare", "none"]
    _, jobs = load_plan(plan, load_site(), court="damped")
    assert [j.court for j in jobs] == ["damped", "none"]
    plan.write_text('[[render]]\nid = "a"\ncourt = "marble"\n', encoding="utf-8")
    with pytest.raises(KitError, match=r"\[\[render\]\] 1: court='marble'"):
        load_plan(plan, load_site())


def test_the_kit_manifest_names_the_court():
    assert court_entry("bare")["hypothesis"] == "bare"
    assert court_entry("damped")["name"]
    assert court_entry("none")["hypothesis"] == "none"
    with pytest.raises(KitError, match="marble"):
        check_court("marble")
