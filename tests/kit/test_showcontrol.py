"""Show control: cue lists, QLab OSC and MIDI Show Control, schedules, and real-time OSC
sent to a real python-osc server on loopback."""

from __future__ import annotations

import csv
import json
import threading
import time

import pytest
from pythonosc.dispatcher import Dispatcher
from pythonosc.osc_server import ThreadingOSCUDPServer

from soundscape.kit import KitError
from soundscape.kit.player import load_cues, osc_sender, parse_target, play
from soundscape.kit.showcontrol import (
    cue_list,
    load_schedule,
    msc_go,
    osc_address,
    write_cue_csv,
    write_cue_json,
)
from tests.kit.scenes import rite


def test_cue_numbers_are_numeric_in_time_order_with_names_kept():
    cues = cue_list(rite())
    assert [c.number for c in cues] == list(range(1, len(cues) + 1))
    assert [c.time for c in cues] == sorted(c.time for c in cues)
    music = next(c for c in cues if c.kind == "music")
    assert (music.number, music.time, music.section, music.name) == (5, 4.0, "s2", "sixia")


def test_msc_go_is_the_rp002_sound_go_with_the_number_in_ascii():
    assert msc_go(12) == bytes([0xF0, 0x7F, 0x7F, 0x02, 0x10, 0x01, 0x31, 0x32, 0xF7])
    assert msc_go(3, device=5)[2] == 5
    with pytest.raises(KitError, match="device id=200"):
        msc_go(1, device=200)
    assert osc_address(7) == "/cue/7/start"


def test_cue_list_files_csv_and_json(tmp_path):
    cues = cue_list(rite())
    data = json.loads(write_cue_json(cues, tmp_path / "p.cues.json", programme="p",
                                     audio=["p.wav"]).read_text())
    assert data["osc"]["port"] == 53000
    assert data["cues"][4]["osc"] == "/cue/5/start"
    assert data["cues"][4]["msc"] == "F0 7F 7F 02 10 01 35 F7"
    rows = list(csv.DictReader(write_cue_csv(cues, tmp_path / "p.cues.csv").open()))
    assert [int(r["number"]) for r in rows] == [c.number for c in cues]
    assert load_cues(tmp_path / "p.cues.json") == cues


def test_cues_reach_a_real_osc_server_in_order_and_never_early(tmp_path):
    got = []
    dispatcher = Dispatcher()
    dispatcher.set_default_handler(lambda address, *args: got.append((address,
                                                                        time.monotonic())))
    server = ThreadingOSCUDPServer(("127.0.0.1", 0), dispatcher)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        cues = [c for c in cue_list(rite()) if c.time <= 4.0]  # 0 s … 4 s
        scaled = [type(c)(c.number, c.time / 20, c.section, c.kind, c.text, c.name)
                  for c in cues]  # played 20× faster: 0.2 s in all
        started = time.monotonic()
        sent = play(scaled, osc_sender("127.0.0.1", server.server_address[1]))
        deadline = time.monotonic() + 2.0
        while len(got) < sent and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        server.shutdown()
        server.server_close()
    assert [a for a, _ in got] == [f"/cue/{c.number}/start" for c in scaled]
    for (_, when), cue in zip(got, scaled, strict=True):
        assert when - started >= cue.time - 1e-3


def test_play_starts_later_and_stops_on_time_with_a_fake_clock():
    now = [100.0]
    sent = []
    cues = cue_list(rite())
    count = play(cues, sent.append, start_at=1.0, stop_after=3.0, clock=lambda: now[0],
                 sleep=lambda s: now.__setitem__(0, now[0] + s))
    assert count == len(sent) and {c.time for c in sent} == {4.0}
    assert now[0] == pytest.approx(103.0)


def test_show_cli_sends_to_a_server(tmp_path, soundscape_cli):
    got = []
    dispatcher = Dispatcher()
    dispatcher.set_default_handler(lambda address, *args: got.append(address))
    server = ThreadingOSCUDPServer(("127.0.0.1", 0), dispatcher)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    cues = [c for c in cue_list(rite()) if c.time == 0.0]
    write_cue_json(cues, tmp_path / "kit" / "p.cues.json", programme="p", audio=[])
    try:
        code, err = soundscape_cli("show", "--osc", f"127.0.0.1:{server.server_address[1]}",
                                   "--programme", "p", "--kit", "kit", cwd=tmp_path)
        time.sleep(0.2)
    finally:
        server.shutdown()
        server.server_close()
    assert code == 0, err
    assert got == ["/cue/1/start", "/cue/2/start"]
    code, err = soundscape_cli("show", "--osc", "nohost", "--kit", "kit", cwd=tmp_path)
    assert code == 2 and "HOST:PORT" in err


def test_schedule_is_checked_against_the_programmes(tmp_path):
    path = tmp_path / "schedule.toml"
    path.write_text('[[slot]]\nstart = "09:30"\nuntil = "12:00"\nprogramme = "music"\n'
                    '[[slot]]\nstart = "12:00"\nprogramme = "rite"\ndays = ["sat", "sun"]\n')
    slots = load_schedule(path, {"music", "rite"})
    assert [(s.start, s.until, s.programme) for s in slots] == [(570, 720, "music"),
                                                               (720, None, "rite")]
    path.write_text('[[slot]]\nstart = "25:00"\nprogramme = "music"\n')
    with pytest.raises(KitError, match=r"\[\[slot\]\] 1: start='25:00'"):
        load_schedule(path, {"music"})
    path.write_text('[[slot]]\nstart = "09:00"\nprogramme = "opera"\n')
    with pytest.raises(KitError, match="programme='opera'"):
        load_schedule(path, {"music"})
    with pytest.raises(KitError, match="HOST:PORT"):
        parse_target("localhost")


@pytest.mark.parametrize("text", ["[::1:5", "::1:53000", "[::1]x:5", "[nohost]:5", "a..b:5",
                                  "999.1.1.1:5", "bad host:5", "-lead:5", "x[y]:5"])
def test_show_refuses_a_malformed_host(tmp_path, soundscape_cli, text):
    """`show --osc '[::1:5'` took `[::1` for a host (and an unbracketed IPv6 address its last
    group for the port); refused with the forms accepted, before the kit is read."""
    for option in ("--osc", "--adm-osc"):
        code, err = soundscape_cli("show", option, text, cwd=tmp_path)
        assert code == 2 and err.startswith(f"error: {option} {text!r}: "), err
        assert err.rstrip().endswith("accepted: HOST:PORT like 127.0.0.1:53000, "
                                     "localhost:53000 or [::1]:53000"), err


def test_show_sends_to_a_host_name_an_ipv4_or_a_bracketed_ipv6_address():
    from soundscape.cli.show import _target

    assert _target("127.0.0.1:53000", "--osc") == ("127.0.0.1", 53000)
    assert _target("qlab.local:53000", "--osc") == ("qlab.local", 53000)
    assert _target("[::1]:53000", "--osc") == ("::1", 53000)  # getaddrinfo takes no brackets
    with pytest.raises(KitError, match=r"--adm-osc 'localhost', accepted: HOST:PORT"):
        _target("localhost", "--adm-osc")
