"""The ritual clock: durations from the table, walking, repeats, holds and waits."""

import itertools
from pathlib import Path
from types import SimpleNamespace

import pytest

import soundscape
from soundscape.errors import CueSheetError
from soundscape.sequence.timeline import Durations, time_steps


def step(id, action, quote="", actor="", place=None, section="s1"):
    return SimpleNamespace(id=id, section=section, actor=actor, action=action, place=place,
                           quote=quote)


@pytest.fixture
def durations():
    return Durations.load()


def test_bundled_table_loads_and_has_the_core_actions(durations):
    for action in ("拜", "再拜稽首", "揖", "升", "降", "洗", "酌", "獻", "卒爵", "坐", "興"):
        assert durations.action_seconds(action) > 0
    assert durations.action_seconds("no such action") == durations.actions["other"]


def test_steps_follow_each_other(durations):
    steps = [step("a", "拜"), step("b", "洗"), step("c", "揖")]
    timed = time_steps(steps, durations)
    assert timed[0].start == 0
    for before, after in itertools.pairwise(timed):
        assert after.start == pytest.approx(before.end)
    assert timed[1].duration == durations.action_seconds("洗")


def test_changing_one_duration_moves_later_steps_only(durations):
    steps = [step(str(i), a) for i, a in enumerate(["拜", "洗", "揖", "酌", "獻"])]
    base = time_steps(steps, durations)
    slower = time_steps(steps, durations.replace(actions={"揖": 10.0}))
    shift = 10.0 - durations.action_seconds("揖")
    assert [t.start for t in slower[:3]] == [t.start for t in base[:3]]
    for a, b in zip(base[3:], slower[3:], strict=True):
        assert b.start - a.start == pytest.approx(shift)


def test_walking_time_is_distance_over_pace(durations):
    places = {"xi": (0.0, -10.0, 0.0), "xijie": (-6.0, -2.0, 0.0)}
    steps = [step("a", "立", actor="主人", place="xi"),
             step("b", "立", actor="主人", place="xijie"),
             step("c", "立", actor="主人", place="xijie", quote="趨")]
    timed = time_steps(steps, durations, place_of=places.get)
    assert timed[0].walk == 0
    assert timed[1].walk == pytest.approx(10.0 / durations.walk)
    assert timed[2].walk == 0


def test_a_step_lasts_its_walk_and_then_its_words(durations):
    """The words are said once the speaker has arrived: walk + words, when they outlast
    the action; the action's own time when it is longer."""
    places = {"xi": (0.0, -10.0, 0.0), "xijie": (-6.0, -2.0, 0.0)}
    steps = [step("a", "立", actor="司射", place="xi"),
             step("b", "命", actor="司射", place="xijie"), step("c", "揖")]
    talk = {"b": 30.0, "c": 0.01}
    timed = time_steps(steps, durations, place_of=places.get,
                       speak=lambda s: talk.get(s.id, 0.0))
    assert timed[1].duration == pytest.approx(10.0 / durations.walk + 30.0)
    assert timed[2].duration == durations.action_seconds("揖")


def test_a_step_lasts_its_walk_and_then_what_its_text_tells(durations):
    """What the text tells its doer to do (his action and the others it names) takes that
    long once he has arrived, where it outlasts the action, the words and the walk."""
    places = {"xi": (0.0, -10.0, 0.0), "xijie": (-6.0, -2.0, 0.0)}
    steps = [step("a", "立", actor="司正", place="xi"),
             step("b", "降", actor="司正", place="xijie"), step("c", "揖")]
    told = {"b": 80.0, "c": 0.01}
    timed = time_steps(steps, durations, place_of=places.get,
                       speak=lambda s: 20.0 if s.id == "b" else 0.0,
                       tells=lambda s: told.get(s.id, 0.0))
    assert timed[1].duration == pytest.approx(10.0 / durations.walk + 80.0)
    assert timed[2].duration == durations.action_seconds("揖")
    assert timed[2].start == pytest.approx(timed[1].end)


def test_a_step_walks_as_far_as_where_the_rite_has_put_its_doer(durations):
    """A climb naming no place is walked to from wherever the doer stands (``approach``),
    which the clock by itself knows only from the places steps name: the longer of the two
    is the step's walk."""
    places = {"xi": (0.0, -10.0, 0.0), "xijie": (-6.0, -2.0, 0.0)}
    steps = [step("a", "立", actor="司馬", place="xi"), step("b", "升", actor="司馬"),
             step("c", "立", actor="司馬", place="xijie")]
    plain = time_steps(steps, durations, place_of=places.get)
    assert plain[1].walk == 0.0
    timed = time_steps(steps, durations, place_of=places.get,
                       approach=lambda s: 25.0 if s.id in {"b", "c"} else 0.0)
    assert timed[1].walk == 25.0
    assert timed[1].duration == pytest.approx(25.0 + durations.action_seconds("升"))
    assert timed[2].walk == pytest.approx(max(25.0, 10.0 / durations.walk))


def test_an_action_that_goes_round_repeats_per_participant(durations):
    timed = time_steps([step("a", "獻", quote="主人獻大夫辯")], durations)
    assert timed[0].duration == pytest.approx(
        durations.action_seconds("獻") * durations.participants["大夫"])


def test_a_rank_no_step_going_round_names_is_found(durations):
    steps = [step("a", "獻", quote="主人獻大夫辯"), step("b", "獻", quote="獻士")]
    misspelt = durations.replace(participants={"大犬": 5})
    assert misspelt.unmatched_ranks(steps) == ["卿", "士", "工", "大犬"]


def test_sequencing_names_a_misspelt_rank_of_the_users_table(tmp_path, soundscape_cli):
    """A user's [participants] rank that no step going round names changed nothing, and
    nothing said so; the bundled table's own ranks are never named."""
    bundled = (Path(soundscape.__file__).parent / "data" / "durations.toml").read_text("utf-8")
    (tmp_path / "mine.toml").write_text(bundled.replace('"大夫" = 5', '"大犬" = 5'), "utf-8")
    (tmp_path / "same.toml").write_text(bundled, "utf-8")
    args = ("sequence", "--from", "s45", "--to", "s45", "-o", "p.json")
    code, err = soundscape_cli(*args, "--durations", "mine.toml", cwd=tmp_path)
    assert code == 0 and ("note: mine.toml: participants 大犬: named by no step going round "
                          "(辯, 徧, 皆), so changing nothing; the ranks the steps name: 卿, 士, "
                          "工, 大夫") in err, err
    code, err = soundscape_cli(*args, "--durations", "same.toml", cwd=tmp_path)
    assert code == 0 and "participants" not in err, err


def test_hold_makes_the_rite_wait_and_wait_delays_a_start(durations):
    steps = [step("song", "other"), step("after", "拜"), step("stop", "拜")]

    def hold(s, start):
        return 120.0 if s.id == "song" else 0.0

    def wait(s, start):
        return 200.0 if s.id == "stop" else 0.0

    timed = time_steps(steps, durations, hold=hold, wait=wait)
    assert timed[0].duration == 120.0 and timed[0].held
    assert timed[1].start == 120.0
    assert timed[2].start == 200.0


def test_bad_table_names_the_key():
    data = {"action": {"other": 3, "拜": -1}, "pace": {"walk": 1, "hurry": 2}}
    with pytest.raises(CueSheetError, match=r"mine.toml: action.拜=-1 must be a finite number ≥ 0"):
        Durations.from_dict(data, source="mine.toml")
    with pytest.raises(CueSheetError, match=r"mine.toml: missing table \[pace\]"):
        Durations.from_dict({"action": {"other": 3}}, source="mine.toml")


@pytest.mark.parametrize("schema", [2, "1", True])
def test_a_table_of_another_schema_is_refused(schema):
    data = {"schema": schema, "action": {"other": 3}, "pace": {"walk": 1.0, "hurry": 2.0}}
    with pytest.raises(CueSheetError, match=r"mine.toml: schema=.* must be supported "
                                             r"\(accepted: 1\)"):
        Durations.from_dict(data, source="mine.toml")


@pytest.mark.parametrize(("action", "said"), [
    ("答拜", "action.答拜 is no action a step carries; 答拜 is a step's 拜 (the glossary's "
            "action bai): give that"),
    ("楫", "action.楫 is no action a step carries; accepted: other or a glossary action "
          "(再拜稽首, 再拜, 拜, 揖"),
])
def test_an_action_no_step_carries_is_refused(action, said):
    """It was read and never used: a step's action is the glossary's canonical term."""
    with pytest.raises(CueSheetError) as refused:
        Durations.from_dict({"action": {action: 3.0, "other": 4.0},
                             "pace": {"walk": 0.8, "hurry": 1.6}}, source="d.toml")
    assert str(refused.value).startswith(f"d.toml: {said}")


def test_every_action_of_the_bundled_table_is_one_a_step_can_carry():
    from soundscape.text import glossary

    words = glossary.load()
    assert set(Durations.load().actions) <= {words.name("action", i)
                                             for i in words.ids("action")}
