"""Batch renders: the same bytes in this process, a process pool and a Dask cluster; plans."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from soundscape.kit import KitError
from soundscape.kit.batch import Job, SharedVoice, run_jobs
from soundscape.kit.plan import load_plan
from soundscape.sequence.planner import perform_from_file
from soundscape.site.courtyard import load_site
from soundscape.site.listeners import Listener
from soundscape.sound.court import load_court
from soundscape.sound.propagation import Surroundings
from soundscape.sound.render import SynthVoice, render_audio
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
    # what `soundscape render --from s10 --to s10` renders (--court bare, its default), by
    # the function it calls
    seat = load_site().listener("gong_wei")
    alone = render_audio(perform_from_file(from_section="s10", to_section="s10"),
                         tmp_path / "alone.wav", listener=Listener(seat.position, seat.facing),
                         workers=2, surroundings=Surroundings(court=load_court(load_site())))
    c4 = (tmp_path / "batch" / "c4.wav").read_bytes()
    assert c4 == alone.files[0].read_bytes()
    assert (tmp_path / "batch" / "zeng-equal.wav").read_bytes() != c4


@pytest.mark.parametrize(("body", "message"), [
    ('[[render]]\nid = "a"\ntuning = "just"\n', r"\[\[render\]\] 1: tuning='just'"),
    ('[[render]]\nid = "a"\nhuangzhong_hz = 20\n', "huangzhong_hz=20"),
    ('[[render]]\nid = "a"\nhuangzhong_hz = "moon"\n', "huangzhong_hz='moon'"),
    ('out = "../x"\n[[render]]\nid = "a"\n', "out='../x' must be a folder inside"),
    ('[[render]]\nid = "a"\ncues = "/etc/passwd"\n',
     "cues='/etc/passwd' must be a cue sheet inside the plan's folder"),
    ('[[render]]\nid = "a"\ncues = "../plan.toml"\n',
     "cues='../plan.toml' must be a cue sheet inside"),
    ('[[render]]\nid = "a"\ncues = "none.toml"\n', "cues='none.toml' must be a cue sheet file"),
    ('[[render]]\nid = "a"\nlistener = "moon"\n', "listener='moon'"),
    ('[[render]]\nid = "a"\nzhong = "verse"\n', "zhong='verse'"),
    ('[[render]]\nid = "a"\n[[render]]\nid = "a"\n', "id='a' is given twice"),
    # a typo of a plan's own key rendered every entry whole, unnoticed
    ('[default]\nfrom = "s45"\n[[render]]\nid = "a"\n', "key='default' must be a plan key"),
])
def test_bad_plans_are_refused_naming_file_entry_and_key(tmp_path, body, message):
    plan = tmp_path / "plan.toml"
    plan.write_text(body, encoding="utf-8")
    with pytest.raises(KitError, match=message) as caught:
        load_plan(plan, load_site())
    assert str(plan) in str(caught.value)


# -- a killed kit or batch takes its pool workers with it -------------------------------------
_STUCK = """
import os, sys, time
from pathlib import Path
from soundscape.fileio import atomic_path
from soundscape.kit.batch import run_jobs

folder = Path(sys.argv[1])


class Stuck:
    '''A job that starts writing a file (as a render does), says so, and never finishes.'''

    def __init__(self, i):
        self.i = i

    def size(self):
        return 1

    def __call__(self):
        with atomic_path(folder / f"loop{self.i}.wav") as tmp:
            tmp.write_bytes(b"half a loop")
            (folder / f"{os.getpid()}.pid").write_text("started")
            time.sleep(3600)


class SlowToUnwind(Stuck):
    '''A stuck job whose unwinding lasts until the test has signalled its worker again.'''

    def __call__(self):
        try:
            super().__call__()
        finally:
            (folder / f"{os.getpid()}.unwinding").write_text("")
            while not (folder / "signalled again").exists():
                time.sleep(0.01)
            (folder / f"{os.getpid()}.unwound").write_text("")


job = {"stuck": Stuck, "slow to unwind": SlowToUnwind}[sys.argv[2]]
run_jobs([job(0), job(1)], executor="local", workers=2)
"""


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for whoever adopted it to reap it does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def _proc_state(pid: int) -> str:
    """What the kernel says of ``pid``: its state, parent, threads and signal masks."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        wchan = Path(f"/proc/{pid}/wchan").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return f"{pid}: gone"
    keep = ("State", "PPid", "Threads", "SigQ", "SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt")
    fields = [line for line in status.splitlines() if line.startswith(keep)]
    return f"{pid}: " + "; ".join([*fields, f"wchan {wchan}"])


def _wait_for(state, what: str, limit_s: float = 60.0, describe=lambda: "") -> None:
    """Poll until ``state()`` holds; ``limit_s`` only bounds a failure, never a pass."""
    deadline = time.monotonic() + limit_s
    while not state():
        assert time.monotonic() < deadline, (
            f"still waiting for {what} after {limit_s} s {describe()}")
        time.sleep(0.05)


def _pool_of_stuck_jobs(folder: Path, job: str) -> tuple[subprocess.Popen, list[int]]:
    """A process running two ``job``s on a pool of two workers, once both have started."""
    script = folder / "stuck.py"
    script.write_text(_STUCK, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    parent = subprocess.Popen([sys.executable, str(script), str(folder), job], env=env)
    _wait_for(lambda: len(list(folder.glob("*.pid"))) == 2, "two workers to start")
    return parent, [int(p.stem) for p in folder.glob("*.pid")]


def _kill_all(parent: subprocess.Popen, folder: Path) -> None:
    parent.kill()
    for pid in [int(p.stem) for p in folder.glob("*.pid")]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def test_pool_workers_end_when_their_parent_is_killed(tmp_path):
    parent, workers = _pool_of_stuck_jobs(tmp_path, "stuck")
    try:
        assert all(_alive(pid) for pid in workers)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        _wait_for(lambda: not any(_alive(pid) for pid in workers), "the workers to end",
                  describe=lambda: [_proc_state(pid) for pid in workers])
        # each worker unwound its render: no half-written file, hidden or not
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
            ["stuck.py", *(f"{pid}.pid" for pid in workers)])
    finally:
        _kill_all(parent, tmp_path)


def test_a_second_sigterm_does_not_cut_a_workers_unwinding_short(tmp_path):
    """A killed parent with threads (a pool's manager and queue feeder among them) sends
    its workers the parent-death signal once for each thread they are handed on to as the
    threads exit. CI saw a worker live on after its parent was killed; a stress run here, a
    temporary file left. Here the second signal comes while each worker unwinds: the
    unwinding must run to its end all the same."""
    parent, workers = _pool_of_stuck_jobs(tmp_path, "slow to unwind")
    try:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        _wait_for(lambda: all((tmp_path / f"{pid}.unwinding").exists() for pid in workers),
                  "the workers to unwind")
        for pid in workers:
            os.kill(pid, signal.SIGTERM)
        (tmp_path / "signalled again").write_text("")
        _wait_for(lambda: not any(_alive(pid) for pid in workers), "the workers to end",
                  describe=lambda: [_proc_state(pid) for pid in workers])
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
            ["stuck.py", "signalled again",
             *(f"{pid}.{stage}" for pid in workers for stage in ("pid", "unwinding", "unwound"))])
    finally:
        _kill_all(parent, tmp_path)


def test_a_sigterm_tripped_before_the_first_was_taken_is_let_go(monkeypatch):
    """A signal that arrives after Python has begun the first one's handler, before the
    handler has set SIG_IGN, runs the handler again: it must not raise a second SystemExit
    into the unwinding the first began."""
    from soundscape.kit import batch

    monkeypatch.setattr(batch, "_in_job", True)
    monkeypatch.setattr(batch, "_ending", False)
    handler = signal.getsignal(signal.SIGTERM)
    try:
        with pytest.raises(SystemExit) as ended:
            batch._on_term(signal.SIGTERM, None)
        assert ended.value.code == 128 + signal.SIGTERM
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
        assert batch._on_term(signal.SIGTERM, None) is None
    finally:
        signal.signal(signal.SIGTERM, handler)


# -- batch renders what render renders ----------------------------------------------------------
def test_shared_voice_answers_everything_synth_voice_answers():
    """The renderer asks its voice ``key``, ``made_at`` and ``variants`` (one rendering per
    key for a singer, three for an instrument): a voice that does not answer one renders
    other notes, so batch would differ from render."""
    asked = {name for name in vars(SynthVoice) if not name.startswith("_")} - {"bells"}
    assert asked <= set(dir(SharedVoice)), asked - set(dir(SharedVoice))


def test_batch_renders_s18s_singing_as_render_does(tmp_path):
    """s18 (樂賓: 歌鹿鳴三終, sung) differed in 99.7 % of frames between batch and render:
    the batch voice gave each sung note three renderings where render gives one."""
    s18 = perform_from_file(from_section="s18", to_section="s18")
    sung = next(e.time for e in s18.events if e.articulation == "sing")
    part = s18.between(sung - 2.0, sung + 6.0)
    assert any(part.sources[e.source].instrument == "voice" for e in part.events)
    seat = load_site().listener("gong_wei")
    listener = Listener(seat.position, seat.facing)
    job = Job("s18", tmp_path / "batch.wav", listener, "stereo", kind="render",
              performance=part)
    [batch] = run_jobs([job], executor="serial")
    alone = render_audio(part, tmp_path / "render.wav", listener=listener,
                         voice=SynthVoice(), surroundings=Surroundings(court=load_court(
                             load_site())))  # render's default court, as the job's
    assert batch.files[0].read_bytes() == alone.files[0].read_bytes()


# -- a peer that is no Dask scheduler -------------------------------------------------------
@contextlib.contextmanager
def _peer(greeting: bytes | None):
    """A TCP server on 127.0.0.1 that greets each connection with ``greeting`` (None: says
    nothing) and then holds it open until the test ends; yields its port."""
    server = socket.create_server(("127.0.0.1", 0))
    done = threading.Event()
    held = []

    def serve() -> None:
        server.settimeout(0.2)
        while not done.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            held.append(conn)
            if greeting is not None:
                conn.sendall(greeting)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        done.set()
        thread.join()
        for conn in held:
            conn.close()
        server.close()


@pytest.mark.parametrize("greeting", [
    b"\xff" * 64,                                     # a length of 2**64 - 1: an exabyte
    b"HTTP/1.1 400 Bad Request\r\n\r\n",              # a web server
    b"\x10\x00\x00\x00\x00\x00\x00\x00" + b"\x00" * 16,  # a small length, frames that lie
    None,                                             # silence
], ids=["garbage", "http", "lying frames", "silent"])
def test_a_peer_that_is_no_dask_scheduler_is_a_clear_error(tmp_path, greeting):
    pytest.importorskip("distributed")
    outcome: dict[str, BaseException | str] = {}

    def run(port: int) -> None:
        try:
            run_jobs(jobs(tmp_path)[:2], executor=f"dask://127.0.0.1:{port}")
            outcome["result"] = "ran"
        except BaseException as error:  # handed to the test thread
            outcome["result"] = error

    with _peer(greeting) as port:
        caller = threading.Thread(target=run, args=(port,), daemon=True)
        caller.start()
        caller.join(90.0)  # bounds a failure only: the refusal itself takes seconds
        assert not caller.is_alive(), "run_jobs still waits on a peer that is no scheduler"
    error = outcome["result"]
    assert isinstance(error, KitError), repr(error)
    assert f"--executor dask://127.0.0.1:{port}: no Dask scheduler answers" in str(error)


def test_a_job_with_nothing_to_render_is_refused_by_name(tmp_path):
    # neither a Performance nor a make(): was "'NoneType' object is not callable"
    job = Job("empty", tmp_path / "empty.wav", Listener((0.0, -10.0, 1.5)), "stereo")
    with pytest.raises(KitError, match="job empty: give it a performance or a make"):
        job()


def test_a_lone_local_job_makes_its_notes_in_a_helper_with_the_same_bytes(tmp_path,
                                                                          monkeypatch):
    import soundscape.kit.loop as loop

    asked = []
    render_blocks = loop.render_blocks

    def recording(*args, **kwargs):
        asked.append(kwargs["workers"])
        return render_blocks(*args, **kwargs)

    monkeypatch.setattr(loop, "render_blocks", recording)
    serial = _bytes(run_jobs(jobs(tmp_path / "a")[:1], executor="serial"))
    alone = _bytes(run_jobs(jobs(tmp_path / "b")[:1], executor="local", workers=2))
    assert asked == [1, 2] and serial == alone


def test_a_part_missing_from_its_performance_is_refused_before_any_render(tmp_path,
                                                                           soundscape_cli):
    """The second entry's section was found missing once the first had been written."""
    plan = tmp_path / "plan.toml"
    plan.write_text('[[render]]\nid = "ok"\nfrom = "s45"\nto = "s45"\n'
                    '[[render]]\nid = "bad"\nfrom = "s99"\nto = "s45"\n', encoding="utf-8")
    code, err = soundscape_cli("batch", str(plan), "--executor", "serial", cwd=tmp_path)
    assert code == 2, err
    assert err.splitlines()[-1].startswith(
        f"error: {plan}: [[render]] 2 (id='bad'): section 's99' is not in this performance")
    assert not (tmp_path / "batch").exists()
