"""The command group: a lazy verb list, and file-system errors as one line with exit 2."""

import errno
import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from soundscape import cli, fileio

_HEAVY = ("scipy", "matplotlib", "music21")


def _modules_after(code: str) -> set[str]:
    """Top-level module names imported after running ``code`` in a fresh interpreter."""
    script = ("import sys\n" + code + "\n"
              "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    return set(done.stdout.split())


def test_help_lists_every_verb_without_importing_them():
    modules = _modules_after(
        "sys.argv = ['soundscape', '--help']\n"
        "from soundscape.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass")
    assert not modules & set(_HEAVY)


def test_help_names_every_verb_with_its_line(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["soundscape", "--help"])
    try:
        cli.main()
    except SystemExit as stop:
        assert stop.code == 0
    out = capsys.readouterr().out
    for verb, line in cli.VERBS.items():
        assert f"{verb}  " in out and line in out
    assert set(cli.VERBS) <= set(cli.cli.list_commands(None))


def test_a_verb_not_in_the_table_takes_its_docstring_without_import():
    modules = _modules_after(
        "from soundscape.cli import _docstring_line\n"
        "print(repr(_docstring_line('plan')))")
    assert "soundscape" in modules and not modules & set(_HEAVY)
    assert cli._docstring_line("plan").startswith("Draw the courtyard")


def test_a_path_under_a_file_is_one_line_exit_2(tmp_path, soundscape_cli):
    (tmp_path / "file.toml").write_text("x = 1\n")
    code, err = soundscape_cli("scala", "-o", "file.toml/s", cwd=tmp_path)
    assert code == 2
    assert err.strip() == "error: file.toml: is a file, where a folder is needed"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.toml"]


def test_a_write_under_a_file_names_the_file(tmp_path):
    (tmp_path / "f").write_text("")
    problem = OSError(errno.ENOTDIR, "Not a directory", str(tmp_path / "f" / "g" / "h.png"))
    assert cli.os_problem(problem) == (f"{tmp_path}/f/g/h.png: {tmp_path}/f is a file, "
                                       "where a folder is needed")


@pytest.mark.parametrize(("number", "words"), [
    (errno.EROFS, "the file system is read-only"),
    (errno.ENOSPC, "no space left on the device"),
    (errno.EACCES, "permission denied"),
])
def test_file_system_errors_are_one_line_exit_2(tmp_path, soundscape_cli, monkeypatch,
                                                number, words):
    def refuse(*args, **kwargs):  # as mkstemp fails: naming the hidden file it tried
        raise OSError(number, "raw message", str(tmp_path / "out" / ".x.a1b2c3.part.scl"))

    monkeypatch.setattr("soundscape.fileio.tempfile.mkstemp", refuse)
    code, err = soundscape_cli("scala", "-o", "out/x", cwd=tmp_path)
    assert code == 2
    # the file asked for, as given, not the hidden one it was to be written as
    assert err.strip() == f"error: out/x.scl: {cli._OS_PROBLEMS[number]}"
    assert words in err and "raw message" not in err


def test_a_failed_write_names_the_file_asked_for_not_its_hidden_one(tmp_path):
    """A write's error (no file name: a full disk) and the hidden file's own name the
    target."""
    target = tmp_path / "x.txt"
    for error in (OSError(errno.ENOSPC, "No space left on device"),
                  OSError(errno.EIO, "Input/output error", "HIDDEN")):
        with pytest.raises(OSError) as raised, fileio.atomic_path(target) as hidden:
            raise (error if error.filename is None
                   else OSError(error.errno, error.strerror, str(hidden)))
        assert raised.value.filename == str(target) and raised.value.errno == error.errno
    assert list(tmp_path.iterdir()) == []


def test_chinese_names_are_accepted_where_a_name_is(tmp_path, soundscape_cli):
    shown = CliRunner().invoke(cli.cli, ["pieces", "鹿鳴"])
    assert shown.exit_code == 0 and shown.output.startswith("鹿鳴 (luming,")
    code, err = soundscape_cli("score", "《鹿鳴》", "-o", "l.musicxml", cwd=tmp_path)
    assert (code, err) == (0, "") and (tmp_path / "l.musicxml").is_file()
    code, err = soundscape_cli("plan", "--listener", "賓席", "-o", "p.svg", cwd=tmp_path)
    assert code == 0, err
    code, err = soundscape_cli("pieces", "鹿", cwd=tmp_path)
    assert code == 2 and "piece '鹿' unknown; known: aoxia 驁夏," in err


def test_every_verb_names_its_output_o_out():
    for verb in ("archery", "audition", "derive", "midi", "plan", "render", "scala", "score",
                 "sequence"):
        options = {o for p in cli.cli.get_command(None, verb).params for o in p.opts}
        assert {"-o", "--out"} <= options, verb
        assert "--output" not in options, verb


def test_every_seed_has_a_range(tmp_path, soundscape_cli):
    """A seed is a signed 64-bit whole number on every verb that takes one."""
    for verb in ("sequence", "render", "midi", "archery", "kit", "audition"):
        code, err = soundscape_cli(verb, "--seed", str(2**63), cwd=tmp_path)
        assert code == 2 and "--seed" in err and "9223372036854775807" in err, (verb, err)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("verb", ["scala", "plan", "sequence", "midi", "archery"])
def test_an_empty_output_name_is_refused(soundscape_cli, tmp_path, verb):
    """``-o ''`` would be the folder "." (a traceback, or files written where not asked)."""
    code, err = soundscape_cli(verb, "-o", "", cwd=tmp_path)
    assert code == 2 and "'' is empty; give a file or folder name" in err, err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("verb", ["scala", "plan", "sequence", "midi", "render", "score"])
def test_a_dash_is_no_file_named_dash(soundscape_cli, tmp_path, verb):
    """``-o -`` wrote a file named "-" where a user meant standard output."""
    code, err = soundscape_cli(verb, "-o", "-", cwd=tmp_path)
    assert code == 2 and "'-' (standard input or output) is not read or written here" in err
    assert list(tmp_path.iterdir()) == []


def test_scala_takes_a_stem_or_a_name_of_the_pair(soundscape_cli, tmp_path):
    for name in ("a", "b.scl", "c.KBM"):
        assert soundscape_cli("scala", "-o", name, cwd=tmp_path) == (0, "")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "a.kbm", "a.scl", "b.kbm", "b.scl", "c.kbm", "c.scl"]


def test_derive_o_dash_writes_the_sheet_to_standard_output(tmp_path, monkeypatch):
    """The same bytes as the file it writes; the summary on standard error; no file "-"."""
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    piped = runner.invoke(cli.cli, ["derive", "--rite", "yan", "-o", "-"])
    filed = runner.invoke(cli.cli, ["derive", "--rite", "yan", "-o", "yan.toml"])
    assert piped.exit_code == filed.exit_code == 0, piped.output
    assert piped.stdout_bytes == (tmp_path / "yan.toml").read_bytes()
    assert "<standard output>: 30 sections" in piped.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["yan.toml"]


def test_a_table_shows_no_control_characters():
    """A sheet's quote with a terminal escape (a title change) printed raw by `cues`."""
    from soundscape.cli._common import table

    shown = table([["quote"], ["\x1b]0;pwned\x07歌鹿鳴\n三終\u200e"]])
    assert shown.splitlines()[1] == "]0;pwned 歌鹿鳴 三終"
    assert not any(ord(c) < 32 for c in shown.replace("\n", ""))


@pytest.mark.parametrize(("args", "message"), [
    (("sequence", "-o", "x.png", "--plot", "x.png"), "--plot and -o are one file, 'x.png'"),
    # -o CUES wrote the Performance's JSON over the hand-edited sheet (hardening review)
    (("sequence", "-o", "x.toml"), "-o 'x.toml': ending '.toml' is not the Performance's; "
                                   "accepted: a .json file"),
    (("impulse", "--source", "men", "--layout", "stems", "-o", "i.wav"),
     "--layout stems is a render's (files per stem, an ADM master); impulse takes a "
     "speaker layout: stereo, binaural, foa, hoa3, ring8, 5.1, 7.1, 7.1.4 or azimuths"),
    (("impulse", "--source", "men", "--layout", "adm", "-o", "i.wav"),
     "--layout adm is a render's"),
    (("impulse", "--source", "men", "--court", "", "-o", "i.wav"), "court '' is unknown"),
    (("impulse", "--source", "men", "--listener", "0,0,-5", "-o", "i.wav"),
     "its height z must not be below the ground"),
    (("sections", "--from", "取矢視算"), "section '取矢視算' names 2 sections: s27, s33"),
    (("sections", "--from", "s02", "--to", "s02"), "section s02 takes no time"),
    (("midi", "--from", "s01", "--to", "s04", "-o", "m.mid"), "section s01 to s04 takes no "
                                                              "time"),
    # an ending no verb reads as a cue sheet; a folder's pair written beside it, a stem's .v2
    # replaced (refused the way the other verbs refuse an unknown ending)
    (("derive", "--rite", "yan", "-o", "sheet.xyz"), "-o 'sheet.xyz': ending '.xyz' is not a "
                                                     "cue sheet's; accepted: a .toml file, or -"),
    (("scala", "-o", "out/"), "-o 'out/': names a folder; accepted: a path stem (STEM.scl and "
                              "STEM.kbm are written) or a name ending .scl or .kbm"),
    (("scala", "-o", "tuning.v2"), "-o 'tuning.v2': ending '.v2' is not Scala's; accepted: "),
    # --gain was applied and --target dropped, unsaid (`play` refused such a pair)
    (("render", "--from", "s45", "--to", "s45", "--gain", "5", "--target", "-20", "-o",
      "r.wav"), "give --gain or --target, not both"),
    # a digit int() cannot read ("²".isdigit() is true): a traceback
    (("show", "--osc", "localhost:²"), "--osc 'localhost:²', accepted: HOST:PORT"),
])
def test_options_that_made_nonsense_are_refused(soundscape_cli, tmp_path, args, message):
    code, err = soundscape_cli(*args, cwd=tmp_path)
    assert code == 2 and message in err, err
    assert not list(tmp_path.glob("*.*"))


@pytest.mark.parametrize("extra", [("--listener", "nowhere"), ("--facing", "garbage"),
                                   ("--listener", "gong_wei")])
def test_a_walk_and_a_seat_are_not_both_taken(soundscape_cli, tmp_path, extra):
    """--path set the listener and silently dropped --listener and --facing, unchecked."""
    walk = tmp_path / "w.toml"
    walk.write_text('[[waypoint]]\ntime = 0\nplace = "men"\n', encoding="utf-8")
    code, err = soundscape_cli("render", "--from", "s45", "--to", "s45", "--path", "w.toml",
                               *extra, "-o", "x.wav", cwd=tmp_path)
    assert code == 2 and "give --path, or --listener/--facing, not both" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.toml"]


def test_an_error_line_is_cut_and_a_toml_file_may_start_with_a_byte_order_mark(
        soundscape_cli, tmp_path):
    code, err = soundscape_cli("sections", "--from", "x" * 100_000, cwd=tmp_path)
    assert code == 2 and len(err) < 3000 and "characters)" in err, len(err)
    from soundscape import cuesheet

    sheet = tmp_path / "bom.toml"  # a byte-order mark, as some editors save one
    sheet.write_text("\ufeff" + cuesheet.bundled_path().read_text(encoding="utf-8"),
                     encoding="utf-8")
    assert len(cuesheet.load(sheet).sections) == 45


def test_running_out_of_memory_is_one_line_exit_2(soundscape_cli, tmp_path, monkeypatch):
    """numpy's allocation failure (a MemoryError) was a traceback."""
    from soundscape.output import scala

    def too_much(*_a, **_k):
        raise MemoryError("Unable to allocate 4.37 GiB")

    monkeypatch.setattr(scala, "write_scala", too_much)
    code, err = soundscape_cli("scala", "-o", "x", cwd=tmp_path)
    assert code == 2, err
    assert err.startswith("error: out of memory: this machine cannot hold what was asked for")
    assert "Traceback" not in err


@pytest.mark.parametrize(("args", "message"), [
    (("sequence", "--seed", "1.5"), "'1.5' is not a whole number; accepted: a whole number "
                                     "from 0 to 9223372036854775807"),
    (("render", "--layout", "5.2"), "(stereo, binaural, foa, hoa3, ring8, 5.1, 7.1, 7.1.4, "
                                    "stems, adm, atmos) or 2 to 64"),
    (("play", "--layout", "5.2", "-o", "x.wav"), "(stereo, binaural, foa, hoa3, ring8, 5.1, "
                                                 "7.1, 7.1.4) or 2 to 64"),
    (("sections", "--performance", "p.json", "--rite", "xiangshe"),
     "--performance p.json is already sequenced: drop --rite xiangshe"),
])
def test_a_refusal_says_what_is_accepted(soundscape_cli, tmp_path, args, message):
    """What the old messages said: "is not a valid integer range", a layout list without the
    ADM masters (play's with stems, which it refuses), "drop cue sheet" for --rite."""
    (tmp_path / "p.json").write_text("{}")
    code, err = soundscape_cli(*args, cwd=tmp_path)
    assert code == 2 and message in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.json"]


def test_a_file_used_as_a_folder_is_named(soundscape_cli, tmp_path):
    """``-o base.wav/x.wav`` with base.wav a file said "base.wav/x.wav: already exists"."""
    (tmp_path / "base.wav").write_bytes(b"mine")
    code, err = soundscape_cli("render", "--from", "s45", "-o", "base.wav/x.wav", cwd=tmp_path)
    assert code == 2 and "error: base.wav: is a file, where a folder is needed" in err, err
    assert (tmp_path / "base.wav").read_bytes() == b"mine"


def test_counts_of_one_are_singular():
    from soundscape.cli._common import counted

    assert [counted(n, "target") for n in (0, 1, 2)] == ["0 targets", "1 target", "2 targets"]


def test_a_sheets_default_outputs_are_named_after_it(soundscape_cli, tmp_path):
    """A 燕禮 sheet's sequence wrote output/dashe.timeline.png over the 大射's."""
    import shutil

    from soundscape.resources import bundled_dir

    shutil.copy(bundled_dir("cues") / "yan.toml", tmp_path / "mine.toml")
    code, err = soundscape_cli("sequence", "mine.toml", "--from", "s03", "--to", "s03",
                               cwd=tmp_path)
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "output").iterdir()) == [
        "mine.performance.json", "mine.timeline.png"]
    code, err = soundscape_cli("midi", "--performance", "output/mine.performance.json",
                               cwd=tmp_path)
    assert code == 0 and (tmp_path / "output" / "mine.mid").is_file(), err


def test_sequences_picture_is_named_as_its_json(soundscape_cli, tmp_path):
    """`sequence --from s18 --to s18 -o output/s18.json` wrote its picture over the whole
    rite's output/dashe.timeline.png."""
    (tmp_path / "output").mkdir()
    whole = tmp_path / "output" / "dashe.timeline.png"
    whole.write_bytes(b"the whole rite's picture")
    for out, picture in (("output/s18.json", "output/s18.timeline.png"),
                         ("part.performance.json", "part.timeline.png")):
        code, err = soundscape_cli("sequence", "--from", "s21", "--to", "s21", "-o", out,
                                   cwd=tmp_path)
        assert code == 0 and (tmp_path / picture).stat().st_size > 1000, err
    assert whole.read_bytes() == b"the whole rite's picture"


def test_sequence_never_writes_over_its_own_input(soundscape_cli, tmp_path):
    """`sequence --performance p.json -o p.json` wrote the part over the whole it came from."""
    code, err = soundscape_cli("sequence", "--from", "s10", "--to", "s10", "-o", "p.json",
                               cwd=tmp_path)
    assert code == 0, err
    before = (tmp_path / "p.json").read_bytes()
    code, err = soundscape_cli("sequence", "--performance", "p.json", "-o", "p.json",
                               cwd=tmp_path)
    assert code == 2 and "-o 'p.json' is an input of this run" in err, err
    assert (tmp_path / "p.json").read_bytes() == before


def test_another_rites_plan_and_rounds_go_beside_the_dashes(soundscape_cli, tmp_path):
    """`plan --rite xiangshe` and `archery --rite xiangshe` wrote output/plan.svg and
    output/archery/round*.json over the 大射's, where render, midi and sequence name their
    files after the rite."""
    for verb in ("plan", "archery"):
        for asked in ((), ("--rite", "xiangshe")):
            code, err = soundscape_cli(verb, *asked, cwd=tmp_path)
            assert code == 0, err
    made = sorted(p.name for p in (tmp_path / "output").iterdir())
    assert made == ["archery", "plan.png", "plan.svg", "xiangshe.archery", "xiangshe.plan.png",
                    "xiangshe.plan.svg"]
    dashe = json.loads((tmp_path / "output" / "archery" / "round1.json").read_text("utf-8"))
    xiangshe = json.loads((tmp_path / "output" / "xiangshe.archery" / "round1.json")
                          .read_text("utf-8"))
    assert dashe != xiangshe


def test_every_option_of_every_verb_says_what_it_is():
    """`impulse --sample-rate`, `kit --seed` and `render --bits` had no help text."""
    import click

    from soundscape.cli import cli

    context = click.Context(cli)
    silent = [(name, p.opts[0]) for name in cli.list_commands(context)
              for p in cli.get_command(context, name).params
              if isinstance(p, click.Option) and not p.hidden and not (p.help or "").strip()]
    assert silent == []


BIG = "9" * 5000  # past Python's 4300 digits for int(): a ValueError, not the option's refusal


@pytest.mark.parametrize(("files", "args", "said"), [
    ({"ov.toml": f'[places.dahou]\ny = "{BIG} 尺"\n'},
     ("plan", "--overrides", "ov.toml", "-o", "p.svg"), "places.dahou"),
    ({}, ("play", "--from", "s18", "--to", "s18", "--start", f"{BIG}:00", "-o", "x.wav"),
     "--start"),
    ({}, ("show", "--osc", f"127.0.0.1:{BIG}"), "--osc"),
    ({"iem.json": '{"LoudspeakerLayout": {"Loudspeakers": [{"Azimuth": %s, "Elevation": 0, '
                  '"Channel": 1}, {"Azimuth": -30, "Elevation": 0, "Channel": 2}]}}' % ("9" * 400)},
     ("kit", "--layout", "iem.json", "--list"), "Azimuth"),
    ({"walk.toml": f'[[waypoint]]\ntime = 0\nplace = "men"\nfacing = {"9" * 400}\n'
                   '[[waypoint]]\ntime = 60\nplace = "zhongting"\n'},
     ("render", "--path", "walk.toml", "-o", "w.wav"), "facing"),
    ({"r.json": '{"gain_db": %s}' % ("9" * 400)},
     ("play", "--from", "s18", "--to", "s18", "--loudness", "r.json", "-o", "x.wav"),
     "gain_db"),
])
def test_numbers_past_a_floats_range_or_pythons_digits_are_refused_in_one_line(
        tmp_path, soundscape_cli, files, args, said):
    """Each was a traceback (int() past 4300 digits; math.isfinite of a 400-digit int)."""
    for name, body in files.items():
        (tmp_path / name).write_text(body, "utf-8")
    code, err = soundscape_cli(*args, cwd=tmp_path)
    last = err.splitlines()[-1]
    assert code == 2 and last.startswith("error: ") and said in last, err[-600:]
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(files)


@pytest.mark.parametrize("chapter", [BIG, f"line {BIG}"])
def test_a_chapter_number_past_pythons_digits_is_no_chapter(tmp_path, soundscape_cli, chapter):
    from soundscape.resources import data_dir

    book = tmp_path / "book.txt"
    book.write_text("".join((data_dir() / "texts" / "kanseki" / f"KR1d0026_00{n}.txt")
                            .read_text("utf-8") for n in (4, 5)), "utf-8")
    code, err = soundscape_cli("derive", "book.txt", "--chapter", chapter, "-o", "x.toml",
                               cwd=tmp_path)
    last = err.splitlines()[-1]
    assert code == 2 and last.startswith("error: ") and "Traceback" not in err, err[-600:]
