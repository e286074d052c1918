"""ADM-OSC: the ADM master's objects streamed to a real python-osc server on loopback."""

from __future__ import annotations

import json
import threading
import time

import pytest
from pythonosc.dispatcher import Dispatcher
from pythonosc.osc_server import ThreadingOSCUDPServer

from soundscape.kit import KitError
from soundscape.kit.admosc import load_objects, messages
from soundscape.kit.showcontrol import cue_list, write_cue_json
from soundscape.performance import Marker, Performance

OBJECTS = {"objects": [
    {"number": 1, "name": "東縣 笙磬", "roman": "east shengqing", "sources": ["east.shengqing"],
     "blocks": [{"time": 0.0, "azimuth": -60.0, "elevation": -5.0, "distance": 1.0,
                 "metres": 9.0}]},
    {"number": 2, "name": "主人 footstep", "roman": "zhuren (footstep)", "sources": ["x"],
     "blocks": [{"time": 0.0, "azimuth": 170.0, "elevation": -10.0, "distance": 1.0,
                 "metres": 8.0},
                {"time": 0.3, "azimuth": 60.0, "elevation": -12.0, "distance": 1.0,
                 "metres": 7.0}]}]}


class Receiver:
    """A python-osc server that keeps what it gets; ``wait(n)`` returns once n arrived."""

    def __init__(self) -> None:
        self.got: list[tuple[str, tuple, float]] = []
        self.arrived = threading.Condition()
        dispatcher = Dispatcher()
        dispatcher.set_default_handler(self._keep)
        self.server = ThreadingOSCUDPServer(("127.0.0.1", 0), dispatcher)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.port = self.server.server_address[1]

    def _keep(self, address, *args) -> None:
        with self.arrived:
            self.got.append((address, args, time.monotonic()))
            self.arrived.notify_all()

    def wait(self, count: int, bound_s: float = 10.0) -> list:
        with self.arrived:  # a state, with a bound so a lost packet fails instead of hanging
            self.arrived.wait_for(lambda: len(self.got) >= count, timeout=bound_s)
        return list(self.got)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    server = Receiver()
    yield server
    server.close()


def test_messages_follow_adm_osc_addresses_in_time_order(tmp_path):
    path = tmp_path / "p.wav.adm.json"
    path.write_text(json.dumps(OBJECTS, ensure_ascii=False), encoding="utf-8")
    sent = messages(load_objects(path))
    assert sent[0].address == "/adm/obj/1/name" and sent[0].args == ("東縣 笙磬 | east shengqing",)
    first = {m.address: m.args for m in sent if m.time == 0.0}
    assert first["/adm/obj/1/aed"] == (-60.0, -5.0, 1.0)
    assert first["/adm/obj/2/azim"] == (170.0,)
    later = [m for m in sent if m.time > 0]
    assert [m.address for m in later] == ["/adm/obj/2/aed", "/adm/obj/2/azim",
                                          "/adm/obj/2/elev", "/adm/obj/2/dist"]
    assert later[1].args == (60.0,) and later[0].time == 0.3


def test_a_bad_object_list_is_refused_by_name(tmp_path):
    with pytest.raises(KitError, match="render --layout adm"):
        load_objects(tmp_path / "missing.adm.json")
    bad = tmp_path / "bad.adm.json"
    bad.write_text('{"objects": [{"number": 1, "blocks": [{"time": 0}]}]}')
    with pytest.raises(KitError, match=r"objects\[0\]"):
        load_objects(bad)
    twice = tmp_path / "twice.adm.json"  # both would have been sent to /adm/obj/1
    twice.write_text(json.dumps({"objects": [{**o, "number": 1} for o in OBJECTS["objects"]]},
                                ensure_ascii=False), encoding="utf-8")
    with pytest.raises(KitError, match=r"objects\[1\]: number=1 must be a number no other "
                                       r"object has \(objects\[0\] has it\)"):
        load_objects(twice)


def test_show_names_the_option_and_target_of_a_network_error_and_refuses_a_late_start(
        tmp_path, soundscape_cli):
    """`--osc 255.255.255.255:9` said only "permission denied"; a --start past the last cue
    sent nothing and exited 0."""
    kit = tmp_path / "kit"
    kit.mkdir()
    perf = Performance.build([], [Marker(0.0, "section", "右設樂", "she yue", "s1"),
                                  Marker(0.2, "music", "奏肆夏", "zou sixia", "m1")], {})
    write_cue_json(cue_list(perf), kit / "p.cues.json", programme="p", audio=[])
    code, err = soundscape_cli("show", "--osc", "255.255.255.255:9", "--kit", "kit",
                               cwd=tmp_path)
    assert code == 2 and err.splitlines()[-1].startswith(
        "error: --osc 255.255.255.255:9: "), err
    code, err = soundscape_cli("show", "--osc", "127.0.0.1:9", "--start", "5", "--kit", "kit",
                               cwd=tmp_path)
    assert code == 2 and "--start 5 s is past the last of p's cues and messages (at 0.2 s)" \
        in err, err


def test_show_streams_the_objects_with_the_cues(tmp_path, soundscape_cli, receiver):
    kit = tmp_path / "kit"
    (kit).mkdir()
    (kit / "p.wav.adm.json").write_text(json.dumps(OBJECTS, ensure_ascii=False),
                                        encoding="utf-8")
    perf = Performance.build([], [Marker(0.0, "section", "右設樂", "she yue", "s1"),
                                  Marker(0.2, "music", "奏肆夏", "zou sixia", "m1")], {})
    write_cue_json(cue_list(perf), kit / "p.cues.json", programme="p", audio=[])
    target = f"127.0.0.1:{receiver.port}"
    started = time.monotonic()
    code, err = soundscape_cli("show", "--osc", target, "--adm-osc", target, "--programme", "p",
                               "--kit", "kit", cwd=tmp_path)
    assert code == 0, err
    got = receiver.wait(2 + 2 + 3 * 4)  # 2 cues, 2 names, 3 blocks of 4 messages
    assert len(got) == 16
    addresses = [a for a, _, _ in got]
    assert addresses.count("/adm/obj/2/aed") == 2 and addresses.count("/adm/obj/1/name") == 1
    assert [a for a in addresses if a.startswith("/cue/")] == ["/cue/1/start", "/cue/2/start"]
    moved = [(args, when) for a, args, when in got if a == "/adm/obj/2/azim"]
    assert [args for args, _ in moved] == [(170.0,), (60.0,)]
    assert moved[1][1] - started >= 0.3 - 1e-3  # the move when its block begins, never early
    cue_2 = next(when for a, _, when in got if a == "/cue/2/start")
    assert cue_2 < moved[1][1]  # on one clock: the cue at 0.2 s before the move at 0.3 s


def test_show_needs_a_target(tmp_path, soundscape_cli):
    code, err = soundscape_cli("show", "--kit", "kit", cwd=tmp_path)
    assert code != 0 and "--adm-osc" in err
    code, err = soundscape_cli("show", "--adm-osc", "nohost", "--kit", "kit", cwd=tmp_path)
    assert code == 2 and "--adm-osc 'nohost'" in err


def test_show_takes_the_kits_only_programme_and_its_own_master(tmp_path, soundscape_cli,
                                                                 receiver):
    """`show --osc HOST:PORT` as the README gives it asked for `rite`, which a default kit
    never builds, and --adm-osc looked for `render`'s file, not the kit's per-zone master."""
    kit = tmp_path / "kit"
    kit.mkdir()
    perf = Performance.build([], [Marker(0.0, "section", "右設樂", "she yue", "s1")], {})
    write_cue_json(cue_list(perf), kit / "cue.p.cues.json", programme="cue.p", audio=[])
    (kit / "cue.p.zhongting.adm.wav.adm.json").write_text(
        json.dumps(OBJECTS, ensure_ascii=False), encoding="utf-8")
    target = f"127.0.0.1:{receiver.port}"
    code, err = soundscape_cli("show", "--osc", target, "--adm-osc", target, "--kit", "kit",
                               cwd=tmp_path)
    assert code == 0, err
    assert "1 cues of cue.p" in err and f"{len(OBJECTS['objects'])} objects" in err, err
    (kit / "cue.p.gong_wei.adm.wav.adm.json").write_bytes(
        (kit / "cue.p.zhongting.adm.wav.adm.json").read_bytes())
    code, err = soundscape_cli("show", "--adm-osc", target, "--kit", "kit", cwd=tmp_path)
    assert code == 2 and "2 ADM masters of cue.p" in err and "give --adm FILE" in err, err
    assert "cue.p.gong_wei.adm.wav.adm.json, cue.p.zhongting.adm.wav.adm.json" in err
    write_cue_json(cue_list(perf), kit / "q.cues.json", programme="q", audio=[])
    code, err = soundscape_cli("show", "--osc", target, "--kit", "kit", cwd=tmp_path)
    assert code == 2 and "holds 2 programmes (cue.p, q): give --programme ID" in err, err
    code, err = soundscape_cli("show", "--osc", target, "--programme", "rite", "--kit", "kit",
                               cwd=tmp_path)
    assert code == 2 and "has no rite.cues.json; it holds cue.p, q" in err, err
    code, err = soundscape_cli("show", "--adm-osc", target, "--programme", "q", "--kit", "kit",
                               cwd=tmp_path)
    assert code == 2 and "no ADM master of q" in err and "--layout adm" in err, err


@pytest.mark.parametrize(("block", "key"), [
    ('{"time": 0, "azimuth": "abc", "elevation": 0, "distance": 1}', "azimuth"),
    ('{"time": "x", "azimuth": 0, "elevation": 0, "distance": 1}', "time"),
    ('{"time": 0, "azimuth": 0, "elevation": 95, "distance": 1}', "elevation"),
])
def test_an_object_list_is_checked_as_any_file_a_user_gives(tmp_path, block, key):
    """`show --adm` read the file with read_text (a FIFO hung it) and used its values
    unchecked (a ValueError or TypeError traceback)."""
    bad = tmp_path / "bad.adm.json"
    bad.write_text('{"objects": [{"number": 1, "name": "a", "roman": "b", "blocks": ['
                   + block + "]}]}")
    with pytest.raises(KitError, match=rf"objects\[0\]\.blocks\[0\]: {key}="):
        load_objects(bad)
    nameless = tmp_path / "nameless.adm.json"
    nameless.write_text('{"objects": [{"number": 1, "blocks": [{"time": 0, "azimuth": 0, '
                        '"elevation": 0, "distance": 1}]}]}')
    with pytest.raises(KitError, match=r"objects\[0\]: name=None must be a string"):
        load_objects(nameless)


def test_an_object_list_that_is_a_fifo_is_refused_not_waited_on(tmp_path):
    import os

    fifo = tmp_path / "f.adm.json"
    os.mkfifo(fifo)
    with pytest.raises(KitError, match=r"f\.adm\.json"):
        load_objects(fifo)
