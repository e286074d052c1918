"""``soundscape impulse``: the court's response between two places, a WAV and its report;
``render`` names the court hypothesis in its loudness report."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile

from soundscape.performance import Event, Performance, Source
from soundscape.site.courtyard import load_site
from soundscape.site.listeners import Listener
from soundscape.sound.court import load_court
from soundscape.sound.propagation import Surroundings
from soundscape.sound.render import render_audio


def test_impulse_writes_the_response_and_names_the_court(tmp_path, soundscape_cli):
    code, err = soundscape_cli("impulse", "--source", "gong_xi", "--listener", "中庭",
                               "--layout", "foa", "--court", "damped", "-o", "ir.wav",
                               cwd=tmp_path)
    assert code == 0, err
    audio, rate = soundfile.read(tmp_path / "ir.wav")
    assert rate == 48000 and audio.shape[1] == 4
    assert audio.shape[0] / rate > 4  # the late tail: seconds, not the dry click
    report = json.loads((tmp_path / "ir.wav.json").read_text())
    assert report["court"] == "damped" and report["court_name"].startswith("damped")
    assert 3 < report["iso3382_mid"]["t20"] < 7
    # the direct sound arrives when the distance says (at 343.2 m/s, 20 °C)
    first = np.argmax(np.abs(audio[:, 0]) > 0.5 * np.abs(audio[:, 0]).max())
    distance = np.linalg.norm(np.subtract(report["source_point"], report["listener_point"]))
    assert abs(first / rate - distance / 343.2) < 0.001


def test_no_court_is_the_floor_and_hall_alone(tmp_path, soundscape_cli):
    code, err = soundscape_cli("impulse", "--source", "gong_xi", "--listener", "men",
                               "--court", "none", "-o", "ir.wav", cwd=tmp_path)
    assert code == 0, err
    audio, rate = soundfile.read(tmp_path / "ir.wav")
    assert audio.shape[0] / rate < 1.0  # no tail
    assert json.loads((tmp_path / "ir.wav.json").read_text())["court"] == "none"
    assert "note: no ISO 3382 figures: the response is" in err, err


def test_unknown_court_is_one_line_exit_2(tmp_path, soundscape_cli):
    code, err = soundscape_cli("impulse", "--source", "gong_xi", "--court", "marble",
                               "-o", "ir.wav", cwd=tmp_path)
    assert code == 2
    assert "marble" in err and "bare" in err and "damped" in err
    assert not any(tmp_path.iterdir())


def test_render_report_names_the_court(tmp_path):
    site = load_site()
    seat = site.listener("gong_wei")
    source = Source("s", "jiangu", "鼓", "drum", "drums", (0.0, -10.0, 1.5))
    performance = Performance.build([Event(0.1, 0.2, "s", None, 0.8, "strike", "c")], [],
                                    {"s": source})
    result = render_audio(performance, tmp_path / "x.wav",
                          listener=Listener(seat.position, seat.facing),
                          surroundings=Surroundings(court=load_court(site, "bare")))
    report = json.loads(result.report_file.read_text())
    assert report["court"]["hypothesis"] == "bare"
    assert result.seconds > 4  # the court's tail rings past the stroke


@pytest.mark.parametrize("source", ["1e308,0,1", "nan,0,1", "a,b,c", "1,2"])
def test_a_source_point_out_of_reach_is_one_line_exit_2(tmp_path, soundscape_cli, source):
    # it crashed (a NaN or an overflowing delay cast to an integer)
    code, err = soundscape_cli("impulse", "--source", source, "-o", "ir.wav", cwd=tmp_path)
    assert code == 2 and f"--source '{source}'" in err and "within 1000 m" in err
    assert not (tmp_path / "ir.wav").exists()


@pytest.mark.parametrize(("where", "point"), [("--listener", "200,0,1.5"),
                                              ("--source", "200,0,1.5"),
                                              ("--source", "100,-30,1.5"),
                                              ("--source", "0,-300,1.5"),
                                              ("--listener", "0,9,2.5")])
def test_a_place_behind_the_walls_is_one_line_exit_2(tmp_path, soundscape_cli, where, point):
    """Outside the court the image sources mirror a point through walls it stands behind: a
    traceback once (min() of no paths), then figures of no sound's (79 m east of the court,
    EDT 5.3 s; 160 m outside the gate, EDT 14.1 s from a 5 s response)."""
    other = ("--source", "zhongting") if where == "--listener" else ("--listener", "zhongting")
    code, err = soundscape_cli("impulse", where, point, *other, "-o", "ir.wav", cwd=tmp_path)
    assert code == 2 and f"{where} at (" in err and "is outside the court's walls" in err, err
    assert "x -20.8 to 20.8 m, y -138.6 to 8.3 m" in err and "--court none" in err
    assert "Traceback" not in err and list(tmp_path.iterdir()) == []
    code, err = soundscape_cli("impulse", where, point, *other, "--court", "none", "-o",
                               "ir.wav", cwd=tmp_path)
    assert code == 0, err  # the direct sound and the floor's: no walls to be behind


def test_a_render_heard_from_behind_the_walls_is_refused_before_sequencing(tmp_path,
                                                                          soundscape_cli):
    code, err = soundscape_cli("render", "--listener", "100,-30,1.6", "--from", "s21", "--to",
                               "s21", "-o", "out.wav", cwd=tmp_path)
    assert code == 2 and "--listener at (100.0, -30.0, 1.6) m is outside" in err, err
    assert "sequencing" not in err and list(tmp_path.iterdir()) == []
    walk = tmp_path / "walk.toml"
    walk.write_text('[[waypoint]]\ntime = 0\nplace = "zhongting"\n'
                    '[[waypoint]]\ntime = 10\nposition = [0, -200, 1.6]\n', "utf-8")
    code, err = soundscape_cli("render", "--path", str(walk), "-o", "out.wav", cwd=tmp_path)
    assert code == 2 and "waypoint[1]" in err and "outside the court's walls" in err, err


def test_a_render_heard_from_inside_the_hall_platform_is_refused_before_sequencing(
        tmp_path, soundscape_cli):
    """It rendered, from within the rammed earth a site override refuses a place in."""
    code, err = soundscape_cli("render", "--listener", "0,5,0.5", "--from", "s18", "--to",
                               "s18", "-o", "out.wav", cwd=tmp_path)
    assert code == 2 and err.endswith("error: --listener '0,5,0.5': (0.00, 5.00, 0.50) m is "
                                      "inside the hall platform; a listener on the hall needs "
                                      "z >= 1.62 m\n"), err
    assert "sequencing" not in err and list(tmp_path.iterdir()) == []


def test_the_same_response_is_the_same_bytes_with_the_layouts_speakers(tmp_path,
                                                                      soundscape_cli):
    """Two runs differed in the PEAK chunk's timestamp, and a 5.1 response carried no
    speaker mask (a convolver could not tell the LFE)."""
    from soundscape.sound.audiofile import read_wav_channel_mask

    for name in ("a.wav", "b.wav"):
        code, err = soundscape_cli("impulse", "--source", "gong_xi", "--layout", "5.1",
                                   "--court", "none", "-o", name, cwd=tmp_path)
        assert code == 0, err
    assert (tmp_path / "a.wav").read_bytes() == (tmp_path / "b.wav").read_bytes()
    assert read_wav_channel_mask(tmp_path / "a.wav") == 0x3F
    assert soundfile.info(str(tmp_path / "a.wav")).subtype == "FLOAT"


def test_a_full_disk_is_one_line_naming_the_response(tmp_path, soundscape_cli, monkeypatch):
    """libsndfile's "System error." came out as a traceback, exit 1."""
    import errno
    import os

    from soundscape.sound import directio

    def full(self, chunk, offset):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), self.name)

    monkeypatch.setattr(directio.DirectWriter, "_write_direct", full)
    code, err = soundscape_cli("impulse", "--source", "gong_xi", "--court", "none", "-o",
                               "ir.wav", cwd=tmp_path)
    assert code == 2 and err.strip().endswith(
        "error: ir.wav: no space left on the device; free some space or write elsewhere"), err
    assert "Traceback" not in err and list(tmp_path.iterdir()) == []
