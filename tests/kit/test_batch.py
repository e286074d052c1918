"""Batch renders: the same bytes in this process, a process pool and a Dask cluster; plans."""

from __future__ import annotations

import pytest

from soundscape.kit import KitError
from soundscape.kit.batch import Job, SharedVoice, run_jobs
from soundscape.kit.plan import load_plan
from soundscape.sequence.planner import perform_from_file
from soundscape.site.courtyard import load_site
from soundscape.site.listeners import Listener
from soundscape.sound.render import render_audio
from tests.kit.scenes import rite

PLACES = [(0.0, -10.0, 1.6), (6.0, -3.0, 1.6)]


def jobs(folder):
    return [Job(f"j{i}.{layout}", folder / f"j{i}.{layout}.wav", Listener(p, "north"), layout,
                performance=rite(), options={"length_s": 8.0})
            for i, p in enumerate(PLACES) for layout in ("stereo", "5.1")]


def _bytes(results):
    return [p.read_bytes() for r in results for p in r.files]


def test_same_bytes_serial_and_process_pool(tmp_path):
    serial = _bytes(run_jobs(jobs(tmp_path / "a"), executor="serial"))
    pooled = _bytes(run_jobs(jobs(tmp_path / "b"), executor="local", workers=2))
    assert serial == pooled and len(set(serial)) == len(serial)


def test_same_bytes_on_a_dask_local_cluster(tmp_path):
    distributed = pytest.importorskip("distributed")
    serial = _bytes(run_jobs(jobs(tmp_path / "a")[:2], executor="serial"))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                                  dashboard_address=None) as cluster:
        address = cluster.scheduler_address.removeprefix("tcp://")
        on_dask = _bytes(run_jobs(jobs(tmp_path / "b")[:2], executor=f"dask://{address}"))
    assert on_dask == serial


def test_unknown_executor_and_absent_scheduler_are_refused(tmp_path):
    with pytest.raises(KitError, match="accepted: local, serial, dask://HOST:PORT"):
        run_jobs(jobs(tmp_path)[:2], executor="spark")
    pytest.importorskip("distributed")
    with pytest.raises(KitError, match="no Dask scheduler answers"):
        run_jobs(jobs(tmp_path)[:2], executor="dask://127.0.0.1:9")


def test_shared_voice_synthesises_a_repeated_note_once(monkeypatch):
    import numpy as np

    from soundscape.sound.render import SynthVoice

    perf = rite()
    event = perf.events[0]
    source = perf.sources[event.source]
    calls = []
    real = SynthVoice.__call__
    monkeypatch.setattr(SynthVoice, "__call__",
                        lambda self, *a, **k: calls.append(1) or real(self, *a, **k))
    first = SharedVoice()(event, source, sample_rate=48000,
                          rng=np.random.default_rng([1, 2, 3, 4]))
    again = SharedVoice()(event, source, sample_rate=48000,
                          rng=np.random.default_rng([1, 2, 3, 4]))
    other = SharedVoice()(event, source, sample_rate=48000,
                          rng=np.random.default_rng([9, 2, 3, 4]))
    assert again is first and len(calls) == 2 and other is not first
    # the renderer's own key (performer included where the model needs it)
    singer = next(e for e in perf.events if e.source == "gong.dashi")
    assert SharedVoice().key(singer, perf.sources["gong.dashi"]) == \
        SynthVoice().key(singer, perf.sources["gong.dashi"])
    # and the rate the renderer makes each source's notes at (a voice below 48 kHz)
    rates = [(SharedVoice().made_at(s, 48000), SynthVoice().made_at(s, 48000))
             for s in perf.sources.values()]
    assert all(ours == theirs for ours, theirs in rates)
    assert any(ours < 48000 for ours, _ in rates)
    # bound to a render as the renderer binds it: a singer's notes keyed as his lines
    shared, own = SharedVoice().bind(perf, 0), SynthVoice().bind(perf, 0)
    assert shared.key(singer, perf.sources["gong.dashi"]) == \
        own.key(singer, perf.sources["gong.dashi"])
    assert shared.key(singer, perf.sources["gong.dashi"])[0] == "line"


def test_plan_renders_equal_soundscape_render(tmp_path, soundscape_cli):
    plan = tmp_path / "plan.toml"
    plan.write_text('out = "batch"\n[defaults]\nfrom = "s10"\nto = "s10"\n'
                    '[[render]]\nid = "c4"\n'
                    '[[render]]\nid = "zeng-equal"\ntuning = "equal"\nhuangzhong_hz = "zeng"\n'
                    'seed = 1\n',
                    encoding="utf-8")
    code, err = soundscape_cli("batch", str(plan), "--jobs", "2", cwd=tmp_path)
    assert code == 0, err
    # what `soundscape render --from s10 --to s10` renders, by the function it calls
    seat = load_site().listener("gong_wei")
    alone = render_audio(perform_from_file(from_section="s10", to_section="s10"),
                         tmp_path / "alone.wav", listener=Listener(seat.position, seat.facing),
                         workers=2)
    c4 = (tmp_path / "batch" / "c4.wav").read_bytes()
    assert c4 == alone.files[0].read_bytes()
    assert (tmp_path / "batch" / "zeng-equal.wav").read_bytes() != c4


@pytest.mark.parametrize(("body", "message"), [
    ('[[render]]\nid = "a"\ntuning = "just"\n', r"\[\[render\]\] 1: tuning='just'"),
    ('[[render]]\nid = "a"\nhuangzhong_hz = 20\n', "huangzhong_hz=20"),
    ('[[render]]\nid = "a"\nhuangzhong_hz = "moon"\n', "huangzhong_hz='moon'"),
    ('out = "../x"\n[[render]]\nid = "a"\n', "out='../x' must be a folder inside"),
    ('[[render]]\nid = "a"\nlistener = "moon"\n', "listener='moon'"),
    ('[[render]]\nid = "a"\nzhong = "verse"\n', "zhong='verse'"),
    ('[[render]]\nid = "a"\n[[render]]\nid = "a"\n', "id='a' is given twice"),
])
def test_bad_plans_are_refused_naming_file_entry_and_key(tmp_path, body, message):
    plan = tmp_path / "plan.toml"
    plan.write_text(body, encoding="utf-8")
    with pytest.raises(KitError, match=message) as caught:
        load_plan(plan, load_site())
    assert str(plan) in str(caught.value)
