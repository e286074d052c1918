"""The sounds between the music: the actions of the rite and the place."""

import collections
import itertools
import math
import types

import pytest

from soundscape import cuesheet
from soundscape.music.instruments import load_instrument
from soundscape.music.tuning import default_tuning
from soundscape.sequence.actions import load_actions
from soundscape.sequence.planner import SequenceOptions, perform
from soundscape.sequence.timeline import Durations


def kind(rite, group):
    return [e for e in rite.events if rite.sources[e.source].group == group]


def test_every_instrument_the_table_names_exists():
    table = load_actions()
    names = {table.walk["instrument"], table.bed["instrument"], table.torch["instrument"],
             table.creatures["instrument"]}
    names |= {s.instrument for sounds in table.by_action.values() for s, _ in sounds}
    names |= {s.instrument for s in table.by_word.values()}
    for name in names:
        instrument = load_instrument(name)
        assert instrument.id == name


def test_every_action_sound_is_traced_to_its_step(rite, sheet):
    """To a step of the sheet, or to a step done again where the text says 如初 (s34.02.r01
    is s28.06 done again as s34.02 says), which names the step of the sheet it is."""
    steps = {s.id for s in sheet.steps}
    repeated = cuesheet.again(sheet)
    actions = kind(rite, "action")
    assert len(actions) > 500
    assert {e.cue for e in actions} <= steps | set(repeated)
    assert {e.cue for e in actions} & set(repeated)
    assert all({ruchu.id, original.id} <= steps for ruchu, original in repeated.values())


def test_a_bow_twice_is_heard_twice(rite, sheet):
    step = next(s for s in sheet.steps if s.action == "再拜" and "辯" not in s.quote
                and "皆" not in s.quote and "徧" not in s.quote)
    bows = [e for e in rite.events if e.cue == step.id and e.articulation == "bow"]
    assert len(bows) == 2 and bows[0].time < bows[1].time


def test_every_action_a_step_names_for_its_actor_is_heard_where_the_text_says_it(rite,
                                                                                sheet, site):
    """s21.01 (司射入於次…西面揖當階北面揖及階揖升堂揖…降…) was one step of action 入: 45 s of
    誘射 heard as its arrows alone. Each action its text names for the 司射 is heard, in the
    order of the text; a bow the text gives another (…再拜賓答再拜) is not his."""
    step = sheet.step("s21.01")
    heard = sorted((e for e in rite.events if e.cue == step.id
                    and rite.sources[e.source].group == "action"), key=lambda e: e.time)
    said = [e.articulation for e in heard if e.articulation in ("salute", "stone")]
    assert said.count("salute") == step.quote.count("揖") == 8
    # 升堂 and 降, but not 降如升射之儀's 升: a likeness, no climb
    assert said.count("stone") == step.quote.count("升") + step.quote.count("降") - 1 == 2
    assert said[:5] == ["salute", "salute", "salute", "stone", "salute"]  # …及階揖升堂揖
    assert {e.source.split(".")[1] for e in heard} == {"sishe"}
    # 當物北面揖及物揖: at the 物, where the text has put him (the step's place is the 次)
    salutes = [e for e in heard if e.articulation == "salute"]
    assert math.dist(salutes[4].position[:2], salutes[0].position[:2]) > 10.0
    # the text's order against his arrows: the six 揖 and the 升堂 of 西面揖…及物揖 before the
    # first, the 北面揖及階揖降…取…取朴 of 卒射… after the last has landed (his 當物…揖 came
    # after his first arrow, his 降 and 取朴 before his last), and the step lasts them
    s21 = next(span for span in rite.sections if span.id == "s21")
    arrows = [e for e in rite.events if s21.start <= e.time < s21.end
              and rite.sources[e.source].instrument in ("bow", "arrow")]
    first = min(e.time for e in arrows)
    landed = max(e.time for e in arrows)
    before, after = heard[:heard.index(salutes[5]) + 1], heard[heard.index(salutes[6]):]
    assert [e.articulation for e in before].count("stone") == 1
    assert all(e.time < first for e in before) and all(e.time > landed for e in after)
    after = [e for e in after if not e.articulation.startswith(("earth", "wood"))]  # walks
    assert [e.articulation for e in after] == ["salute", "salute", "stone", "handover",
                                               "handover"]
    assert after[-1].time < s21.end
    # 當階…揖及階揖升堂揖 at the west stairs (the 司射's: the lord and host keep the east), at
    # their foot, halfway up them, at their top on the hall; after his arrows 及階揖 at the
    # top again (he is on the hall) and 降 halfway down (they were all heard at the 次)
    west, hall = site.place("xijie"), site.hall.height
    foot, climb, top = salutes[1], before[[e.articulation for e in before].index("stone")], \
        salutes[3]
    assert math.dist(foot.position[:2], west[:2]) < 1.0 and foot.position[2] < 2.0
    assert math.dist(climb.position[:2], west[:2]) < 1.5 and 0 < climb.position[2] < hall
    assert math.dist(top.position[:2], west[:2]) < 1.5 and top.position[2] > hall
    assert after[1].position[2] > hall and after[2].position == climb.position
    washing = sheet.step("s10.01")  # 主人洗…升…酌…降…酢…坐奠…再拜稽首
    kinds = {e.articulation for e in rite.events if e.cue == washing.id}
    assert {"cup", "stone", "kneel", "jue_wood", "bow"} <= kinds


def test_one_doer_walks_between_the_places_his_text_names(rite, sheet, site):
    """s21.01: 出於次西面揖當階…及階揖升堂揖當物…及物揖 — the 司射 walks from the 次 to the west
    stairs (on the earth), climbs, walks on the hall to the 物, all before his first arrow
    and at his pace; after his last, back to the stairs, down, and 適堂西 (the ground west of
    the hall, not the hall's middle), where he takes the 朴. Before, he went from the 次 to
    the 物 unheard in the 12 s the round gave its first release."""
    step = sheet.step("s21.01")
    heard = sorted((e for e in rite.events if e.cue == step.id
                    and rite.sources[e.source].group == "action"), key=lambda e: e.time)
    s21 = next(span for span in rite.sections if span.id == "s21")
    first = min(e.time for e in rite.events if s21.start <= e.time < s21.end
                and rite.sources[e.source].instrument == "bow")
    tent, stairs, mark = site.place("ci"), site.place("xijie"), site.place("wu")
    earth = [e for e in heard if e.articulation.startswith("earth") and e.time < first]
    wood = [e for e in heard if e.articulation.startswith("wood") and e.time < first]
    # the court crossed piece by piece, each nearer the stairs, at his formal pace
    gaps = [math.dist(e.position[:2], stairs[:2]) for e in earth]
    assert len(earth) >= 5 and gaps == sorted(gaps, reverse=True)
    assert math.dist(earth[0].position[:2], tent[:2]) < 3.0 and gaps[-1] < 3.0
    pace = Durations.load().walk
    walked = earth[-1].time + earth[-1].duration - earth[0].time
    assert walked == pytest.approx(math.dist(tent[:2], stairs[:2]) / pace, rel=0.05)
    # then on the hall's boards from the top of the stairs to the 物, still before his arrow
    assert wood and all(e.position[2] > site.hall.height - 0.1 for e in wood)
    assert math.dist(wood[-1].position[:2], mark[:2]) < 2.0
    assert wood[0].time > earth[-1].time and wood[-1].time + wood[-1].duration < first
    # after his arrows: over the court to 堂西, beside the hall on the ground
    west_of_hall = site.place("tang_xi")
    assert west_of_hall[2] == 0 and west_of_hall[0] < -site.hall.width / 2
    taken = [e for e in heard if e.articulation == "handover"]
    assert taken and all(math.dist(e.position[:2], west_of_hall[:2]) < 0.5 for e in taken)
    assert any(e.articulation.startswith("earth") and e.time > first for e in heard)


def test_every_pair_walks_up_to_its_marks_and_down_again(rite, sheet, site):
    """The text tells the 上耦's walk (出次…當階北面揖及階揖…升堂…當物北面揖及物揖; 卒射…降…
    相左交於階前…適次) and says 亦如之 of the other pairs: each walking pair of every round
    is heard going up between the pair before's last arrow and its own first, and coming
    down after its own last, on the earth, the stairs' stone and the hall's boards, the
    上射 on the west; no archer is on the stairs while a pair shoots. The first pair of
    rounds 2 and 3 goes up in the 司射's step that says so (一耦揖升如初)."""
    ci, mark = site.place("ci"), site.place("wu")
    archers = [e for e in kind(rite, "action") if e.source.startswith(
        tuple(f"action.{s.archer}." for r in rite.rounds for s in r.shots if s.pair != "gong"))]
    for round_ in rite.rounds[1:]:
        done, shooting = None, []
        for turn in round_.turns:
            shots = [s for s in round_.shots if s.turn == turn.index]
            first, last = min(s.release for s in shots), max(s.arrival for s in shots)
            shooting.append((first, last))
            if turn.pair == "gong":  # the duke and the 賓 go up in their own steps
                done = last
                continue
            for who in ("shang", "xia"):
                mine = [e for e in archers if e.source.startswith(f"action.{turn.pair}.{who}.")]
                up = [e for e in mine if done is not None and done < e.time < first]
                down = [e for e in mine if last < e.time < last + 90.0]
                for walk in (up, down) if done is not None else (down,):
                    assert {"stone", "salute"} <= {e.articulation for e in walk}, (
                        round_.number, turn.name, who)
                    assert any(e.articulation.startswith("wood") for e in walk)
                    assert any(e.articulation.startswith("earth") for e in walk)
                if up:
                    assert max(e.time + e.duration for e in up
                               if e.articulation != "salute") <= first
                    boards = [e for e in up if e.articulation.startswith("wood")]
                    assert math.dist(boards[-1].position[:2], mark[:2]) < 2.0
                    earth = [e for e in up if e.articulation.startswith("earth")]
                    assert math.dist(earth[0].position[:2], ci[:2]) < \
                        math.dist(earth[-1].position[:2], ci[:2])
                # at the 次 he puts his sleeve on again (適次釋弓說決拾襲反位)
                dressed = [e for e in down if e.articulation == "dress"]
                assert dressed and math.dist(dressed[0].position[:2], ci[:2]) < 2.0
                # …and first takes off his thumb ring and armguard there (說決拾)
                bracer = [e for e in down if e.articulation == "bracer"]
                assert bracer and bracer[0].time < dressed[0].time
                assert math.dist(bracer[0].position[:2], ci[:2]) < 2.0
                at_mark = min((e for e in down if e.articulation == "salute"),
                              key=lambda e: e.time)  # 北面揖 at his 物: 上射在左, the west
                assert (at_mark.position[0] < mark[0]) == (who == "shang")
            done = last
        stairs = [e for e in archers if e.articulation == "stone"]
        assert not [e for e in stairs for first, last in shooting if first < e.time < last]
        if round_.number >= 2:  # 司射作射如初一耦揖升如初: the first pair goes up then
            pair = round_.turns[0].pair
            told = {e.articulation for e in archers if e.source.startswith(f"action.{pair}.")
                    and "一耦揖升" in sheet.step(e.cue).quote and e.time < shooting[0][0]}
            assert {"stone", "salute", "wood", "earth"} <= told


def test_ones_own_climb_is_on_the_stairs_and_he_walks_on_from_them(rite, site):
    """賓降釋弓於堂西 (s26.38): his 降 is heard on the west stairs, halfway down, then his
    steps on the earth to 堂西 (it was heard on the ground at 堂西, and he walked there
    through the air)."""
    foot, west = site.place("xijie"), site.place("tang_xi")
    heard = sorted((e for e in kind(rite, "action") if e.cue == "s26.38"
                    and rite.sources[e.source].instrument == "footstep"), key=lambda e: e.time)
    stone = heard[0]
    assert stone.articulation == "stone" and abs(stone.position[0] - foot[0]) < 0.5
    assert 0 < stone.position[2] < site.hall.height
    earth = heard[1:]
    assert earth and all(e.articulation.startswith("earth") for e in earth)
    assert earth[0].time >= stone.time + stone.duration - 1e-6
    assert math.dist(earth[-1].position[:2], west[:2]) < math.dist(earth[0].position[:2],
                                                                   west[:2])


def test_a_climb_that_names_no_place_is_walked_to_and_leaves_him_up(rite, sheet, site):
    """司馬正又袒執弓升 (s23.12) names no place: he went from his place in the court to the
    west stairs (20 m), up them and back through the air to where he had stood, all in the
    升's 5 s, then bared his arm and took his bow. The clock now gives the step his walk to
    the stairs at his pace (``ActionSounds.climb_walks``); he bares his arm and takes his
    bow where he stands, as the text has it, walks, climbs, and stays up."""
    foot, top = load_actions()._own_climb(sheet.step("s23.12"), site, Durations.load())
    heard = sorted((e for e in kind(rite, "action") if e.cue == "s23.12"), key=lambda e: e.time)
    steps = [e for e in heard if rite.sources[e.source].instrument == "footstep"]
    earth = [e for e in steps if e.articulation.startswith("earth")]
    (stone,) = [e for e in steps if e.articulation == "stone"]
    assert earth and earth[-1].time < stone.time  # to the stairs, and not back
    metres = math.dist(earth[0].position[:2], foot[:2])
    assert metres > 15.0
    walked = stone.time - earth[0].time
    assert walked >= metres / Durations.load().walk * 0.9  # at his pace, not 10 m/s
    ahead = [e for e in heard if e.time < earth[0].time]
    assert [e.articulation for e in ahead] == ["dress", "take"]  # 袒, 執弓
    assert all(math.dist(e.position[:2], earth[0].position[:2]) < 2.0 for e in ahead)
    assert heard[-1] is stone and stone.position[2] < top[2]  # up, and nothing after


def test_a_doing_the_text_says_is_not_done_is_not_heard(rite, sheet):
    """工不興左瑟一人拜受爵: the 工 does not rise (blind, he bows seated); 賓揖升不拜洗: the 賓
    does not bow for the washing, nor wash (the host does); 大師不興許諾: he assents seated;
    賓少進辭洗, 主人辭降: the washing and the going down declined are the other's. Each was
    heard done by the step's actor."""
    def heard(cue):
        return {e.articulation for e in kind(rite, "action") if e.cue == cue}

    assert "不興" in sheet.step("s18.11").quote
    assert "bow" in heard("s18.11") and "rise" not in heard("s18.11")
    assert "salute" in heard("s11.07") and not heard("s11.07") & {"bow", "cup", "clink"}
    assert "rise" not in heard("s32.13")
    assert sheet.step("s07.06").quote.endswith("辭洗") and not heard("s07.06") & {"cup", "clink"}
    assert sheet.step("s07.03").quote == "主人辭降" and "stone" not in heard("s07.03")


def test_a_soundless_action_is_placed_where_the_text_has_it_done_not_where_it_is_denied():
    """命 and 告 have no sound of their own: a step's time is cut where its text names them.
    A mention that is not done (不告, 如告; 辭降: declined, another's) is not that place."""
    table = load_actions()

    def at(quote: str, action: str) -> float:
        step = types.SimpleNamespace(quote=quote, action=action, actor="司射", place=None)
        return table._own_at(step)

    quote = "司射不告遂適阼階下告於公"
    assert at(quote, "告") == pytest.approx(quote.index("告於公") / len(quote))
    assert at("司射適阼階下告於公", "告") == pytest.approx(6 / 9)
    quote = "司射如告遂告於公"  # a likeness (如告) is not the doing
    assert at(quote, "告") == pytest.approx(quote.index("告於公") / len(quote))
    assert at("司射適阼階下", "告") == 0.0  # not named


def test_what_the_text_names_before_the_doers_own_action_comes_first(rite, sheet):
    """司射袒執弓挾一個搢樸…命三耦 (s28.04, his own action the 命): he bares his arm, takes
    his bow and puts the 扑 in his belt, in that order; the 扑 was heard before the bow (each
    placed by where its word falls in the step's time, after his own action)."""
    assert sheet.step("s28.04").action == "命"
    heard = sorted((e for e in kind(rite, "action") if e.cue == "s28.04"), key=lambda e: e.time)
    assert [e.articulation for e in heard] == ["dress", "take", "set"]


def test_a_step_lasts_what_its_text_tells_its_doer_to_do(rite, sheet):
    """司正降自西階南面坐取觶升酌散降南面坐奠觶興…再拜稽首左還南面坐取觶洗南面反奠於其所
    (s19.09) was given its 降's 5 s, and its 21 other sounds were heard at one instant. The
    step lasts what its doings take, one after another, so no one makes two sounds of one
    kind at once anywhere in the rite (9 did before)."""
    heard = sorted((e for e in kind(rite, "action") if e.cue == "s19.09"), key=lambda e: e.time)
    onsets = [e.time for e in heard]
    assert len(heard) > 20 and len(set(onsets)) > 20
    assert onsets[-1] - onsets[0] > 60.0
    step_start = next(m.time for m in rite.markers if m.ref == "s19.09")
    following = next(m.time for m in rite.markers if m.ref == "s20.01")
    assert following >= onsets[-1] > step_start
    at_once = collections.Counter((e.source, e.time, e.articulation) for e in rite.events)
    assert max(at_once.values()) == 1


def test_words_said_and_one_spoken_to_do_not_end_what_the_doer_does(rite, sheet):
    """釋獲者…適阼階下北面告於公曰左右卒射反位坐委餘獲於中西興共而俟 (s26.44): the 卒射 he
    says made it a shooting step, which the round times, and the duke he speaks to (於公)
    ended his doings there, so he knelt, laid down the tallies and rose in its 4 s (a
    company's default). Now the step lasts what he does after he speaks; 司馬正出於下射之南…
    降自西階遂適次釋弓說決拾襲反位 (s22.17) goes on past the 下射 he passes by; but not past
    受於公者 (those who received from the duke: s44.13 is the pourer's)."""
    from soundscape.sequence.actions import shooting_words
    from soundscape.text.source import normalise

    step = sheet.step("s26.44")
    text = normalise(step.quote)
    said = [(c.span[0] - step.span[0], c.span[1] - step.span[0]) for c in sheet.speech
            if c.step == step.id]
    assert [text[a:b] for a, b in said] == ["左右卒射"]
    assert shooting_words(text) is not None and shooting_words(text, said) is None

    def lasts(step_id):
        refs = [m for m in rite.markers if m.kind == "step"]
        at = next(k for k, m in enumerate(refs) if m.ref == step_id)
        return refs[at + 1].time - refs[at].time

    his = [e for e in kind(rite, "action") if e.cue == "s26.44"]
    assert {"kneel", "rise"} <= {e.articulation for e in his}
    durations = Durations.load()
    assert lasts("s26.44") >= durations.step_seconds(step) + durations.action_seconds("坐") \
        + durations.action_seconds("興")  # his own 適, then a kneeling and a rising
    gear = {e.articulation for e in kind(rite, "action") if e.cue == "s22.17"}
    assert {"set", "bracer", "dress"} <= gear  # 釋弓, 說決拾, 襲
    # 執散爵者乃酌行之唯受於公者拜…: those who received from the duke bow, not the pourer
    pourer = {e.articulation for e in kind(rite, "action") if e.cue == "s44.13"}
    assert "cup" in pourer and not {"bow", "rise"} & pourer


def test_walkers_are_heard_moving_on_the_floor_under_them(rite, site):
    steps = [e for e in kind(rite, "action") if rite.sources[e.source].instrument == "footstep"]
    assert steps
    for event in steps:
        on_hall = event.position[2] > 0.3
        if event.articulation.startswith(("earth", "wood")):
            assert event.articulation.startswith("wood") == on_hall
            # on the court or the hall, never between: from one to the other by the stairs
            assert event.position[2] in (0.0, site.hall.height), event
    # one walker walks one walk at a time: a step's walk never runs into the next one's
    for source in {e.source for e in steps}:
        mine = sorted((e for e in steps if e.source == source), key=lambda e: e.time)
        assert all(b.time >= a.time + a.duration - 0.05
                   for a, b in itertools.pairwise(mine) if a.cue != b.cue), source
    # a walk of several pieces moves: the pieces of one walker's walk change place
    walks = []
    for event in sorted(steps, key=lambda e: (e.source, e.time)):
        walk = walks[-1] if walks else None
        if walk and walk[-1].source == event.source and \
                event.time - walk[-1].time - walk[-1].duration < 0.01:
            walk.append(event)
        elif event.articulation != "stone":
            walks.append([event])
    longest = max(walks, key=len)
    assert len(longest) >= 3
    assert math.dist(longest[0].position, longest[-1].position) > 2.0


def test_the_place_never_falls_silent_and_turns_to_night_with_the_torches(rite, sheet):
    bed = sorted(kind(rite, "place"), key=lambda e: e.time)
    onsets = sorted(e.time for e in bed)
    assert onsets[0] == 0.0
    assert max(b - a for a, b in itertools.pairwise(onsets)) < 20.0
    covered = max(e.end for e in bed)
    assert covered >= rite.duration - 1.0
    lit = min(e.time for e in bed if e.articulation == "torch")
    torch_step = next(s for s in sheet.steps if "燭" in s.quote)
    assert lit == pytest.approx(next(m.time for m in rite.markers if m.ref == torch_step.id))
    assert {e.articulation for e in bed if e.time > lit + 1 and e.source.startswith(
        "place.bed")} == {"night"}
    assert bed[0].articulation == "morning"


def test_the_torches_burn_where_the_text_holds_them(rite, site):
    """宵則庶子執燭於阼階上司宮執燭於西階上甸人執大燭於庭閽人為燭於門外: the two 階上 torches are
    held on the hall floor at the head of their stairs (not at the stairs' feet), the 大燭
    in the 庭 and the gate's outside it; each is held up by the one who holds it."""
    height = load_actions().torch["height"]
    held = {e.source: rite.sources[e.source].position for e in kind(rite, "place")
            if e.articulation == "torch"}
    assert len(held) == 4
    for stairs in ("zuojie", "xijie"):
        foot = site.place(stairs)
        x, y, z = held[f"place.torch.{stairs}_shang"]
        assert abs(x - foot[0]) <= site.stairs[0] / 2 + 1e-9  # within the stair's width
        assert site.on_hall(x, y)  # not at the stair's foot in the court
        assert z == pytest.approx(site.hall.height + height)
    assert held["place.torch.zhongting"][:2] == pytest.approx(site.place("zhongting")[:2])
    assert held["place.torch.men"][:2] == pytest.approx(site.place("men")[:2])


def test_a_great_torch_burns_louder_where_the_text_names_one(rite):
    """甸人執大燭於庭 (鄭注: 庭大燭，為其位廣也) but 閽人為燭於門外 and 執燭於阼階上: the 庭's torch
    alone is a great one, at the great velocity; the others at the torch's own."""
    torch = load_actions().torch
    velocities = {e.source: e.velocity for e in kind(rite, "place") if e.articulation == "torch"}
    assert torch["great_velocity"] > torch["velocity"]
    assert velocities == {"place.torch.zhongting": torch["great_velocity"],
                          "place.torch.men": torch["velocity"],
                          "place.torch.zuojie_shang": torch["velocity"],
                          "place.torch.xijie_shang": torch["velocity"]}


def test_the_yan_lights_great_torches_in_the_court_and_at_the_gate():
    """燕禮: 甸人執大燭於庭，閽人爲大燭於門外: both are great, the 階上 torches are not."""
    from soundscape.resources import bundled_dir
    from soundscape.sequence.planner import perform_from_file

    torch = load_actions().torch
    yan = perform_from_file(bundled_dir("cues") / "yan.toml", seed=0)
    velocities = {e.source: e.velocity for e in yan.events if e.articulation == "torch"}
    assert velocities == {"place.torch.zhongting": torch["great_velocity"],
                          "place.torch.men": torch["great_velocity"],
                          "place.torch.zuojie_shang": torch["velocity"],
                          "place.torch.xijie_shang": torch["velocity"]}


def test_one_who_stands_by_a_target_stands_on_the_ground(rite, site):
    """大史在干侯之東北 put the 大史 at the 干侯's centre, 2.4 m up, and he answered the
    司射's 誓 with 諾 from there, 70 m from the duke; then 大史俟於所設中之西: he waits
    west of the 中's place, on the ground, and answers from there."""
    mouth = site.people["standing_mouth"]
    said = next(e for e in rite.events if e.source == "speech.dashi_historian"
                and e.lyric == "諾")
    x, y, z = said.position
    assert z == pytest.approx(mouth)
    assert math.dist((x, y), site.place("zhong")[:2]) < 3.0
    assert site.floor_at(*site.place("gan")[:2]) == 0.0
    assert site.floor_at(*site.place("gong_wei")[:2]) == pytest.approx(site.hall.height)
    from soundscape.sequence.actions import _place  # where a step puts its actor

    for target in ("gan", "can", "dahou"):
        assert site.place(target)[2] > 2.0  # the 侯's centre
        assert _place(site, target) == (*site.place(target)[:2], 0.0)
    assert _place(site, "gong_wei") == pytest.approx(site.place("gong_wei"))


def test_music_only_leaves_the_actions_and_the_place_out(sheet, site):
    music = perform(sheet, site=site, tuning=default_tuning(), seed=5,
                    options=SequenceOptions(soundscape=False))
    assert not {s.group for s in music.sources.values()} & {"action", "place"}


def test_no_two_sounds_of_the_place_share_a_rendering(rite):
    """Every bed segment, torch stretch and call has its own note key (its own tag): the
    render makes each its own (the old bed gave a source one tag an hour, so 2,093
    segments were 99 renderings and the bed repeated every 26 s)."""
    from soundscape.sound.notes import note_key

    place = kind(rite, "place")
    keys = {note_key(e, rite.sources[e.source]) for e in place}
    assert len(place) > 2000 and len(keys) == len(place)


def test_the_bed_heard_through_the_render_never_repeats(rite):
    """Two sources' segments over the first 400 s, made as the render makes them (their
    keys, variants and seeds: DryNotes) and laid on the clock: the autocorrelation stays
    under 0.05 at every lag of 1-300 s (the old bed: 0.33-0.41 at 26, 52, 78 s)."""
    import numpy as np

    from soundscape.sound.notes import ByteLru, DryNotes, SynthVoice, event_variants

    rate, stop = 16000, 400.0
    notes = DryNotes(SynthVoice(), rate, 7, ByteLru(256 << 20))
    variants = event_variants(rite, notes, 7)
    mix = np.zeros(round((stop + 10) * rate))
    for index, event in enumerate(rite.events):
        if event.source in ("place.bed.0", "place.bed.1") and event.time < stop:
            source = rite.sources[event.source]
            variant = variants[index]
            mono = notes(event, source, notes.key(event, source), variant)
            at = round(event.time * rate)
            mix[at:at + mono.size] += mono[:mix.size - at]
    x = mix[:round(stop * rate)] - mix[:round(stop * rate)].mean()
    size = 1 << (2 * x.size - 1).bit_length()
    spectrum = np.fft.rfft(x, size)
    r = np.fft.irfft(spectrum * np.conj(spectrum), size)[:x.size]
    r /= r[0]
    assert np.max(np.abs(r[rate:300 * rate])) < 0.05


def test_the_creatures_call_by_the_hour_from_their_trees_and_walls(rite):
    """Dawn holds the most bird calls a minute; cicadas sing by day, never at dawn;
    crickets from evening on, none by day; each call comes from a spot of its kind."""
    table = load_actions()
    calls = [e for e in kind(rite, "place") if rite.sources[e.source].instrument
             == table.creatures["instrument"]]
    first = [e for e in calls if e.time < table.bed["day_after_s"]]
    later = [e for e in calls if e.time >= table.bed["day_after_s"]]
    birds = ("sparrow", "magpie", "dove", "oriole")

    def per_min(events, names):
        span = max(e.time for e in events) - min(e.time for e in events)
        return sum(e.articulation in names for e in events) / span * 60

    assert per_min(first, birds) > 2 * per_min(later, birds)
    assert not [e for e in first if e.articulation == "cicada"]
    assert [e for e in later if e.articulation == "cicada"]
    lit = min(e.time for e in kind(rite, "place") if e.articulation == "torch")
    day = [e for e in later if e.time < lit - table.bed["evening_before_night_s"]]
    assert day and not [e for e in day if e.articulation == "cricket"]
    assert [e for e in calls if e.time >= lit and e.articulation == "cricket"]
    spots = {"trees": {tuple(p) for p in table.creatures["trees"]},
             "walls": {tuple(p) for p in table.creatures["walls"]}}
    of = {s["articulation"]: s["spots"] for s in table.creatures["species"]}
    for event in calls:
        assert rite.sources[event.source].position in spots[of[event.articulation]]
        assert event.duration < 10.0  # lined: one filter a chunk, however many calls


def test_a_longer_rite_leaves_the_creatures_calls_before_it_as_they_were():
    """Calls are drawn a minute at a time, each species and minute from its own generator:
    the night lit 200 s later and the rite ending 300 s later change no call before the
    evening that moved (one generator for all drew every call anew)."""
    from soundscape.sequence.actions import _Made

    table = load_actions()

    def calls(night, end):
        made = _Made()
        table._place_creatures(made, night, end, seed=3)
        return {(e.time, e.source, e.articulation, e.velocity, e.duration, e.lyric)
                for e in made.events}

    before, after = calls(5000.0, 8000.0), calls(5200.0, 8300.0)
    evening = 5000.0 - table.bed["evening_before_night_s"]
    kept = {c for c in before if c[0] < evening}
    assert len(kept) > 100 and kept == {c for c in after if c[0] < evening}
    assert before != after
    assert len({c[5] for c in after}) == len(after)  # every call its own tag


def test_the_stairs_are_the_actors_unless_the_text_names_them(site):
    """The lord and the host climb the east stairs (阼階), everyone else the west, unless the
    text says which (升自西階)."""
    table = load_actions()
    east, west = site.place("zuojie"), site.place("xijie")
    assert table._stairs("公升即席", 1, "公", site)[0] == east
    assert table._stairs("主人降", 2, "主人", site)[0] == east
    assert table._stairs("賓升", 1, "賓", site)[0] == west
    assert table._stairs("主人升自西階", 2, "主人", site)[0] == west
    foot, top = table._stairs("賓降自阼階", 1, "賓", site)
    assert foot == east and top[2] == site.hall.height


def test_after_a_climb_the_text_names_the_actor_is_on_the_hall(rite, sheet, site):
    """小樂正從之升自西階北面東上坐授瑟乃降 (s18.07): his 坐 and 授 were heard at the foot of
    the west stairs, on the ground, the stairs named (自西階) taken for where he stood."""
    step = sheet.step("s18.07")
    assert "升自西階" in step.quote
    heard = {e.articulation: e.position for e in rite.events if e.cue == step.id
             and rite.sources[e.source].group == "action"}
    for doing in ("kneel", "handover"):
        assert heard[doing][2] > site.hall.height, doing
    # the north stairs' top is on the hall too
    _, top = load_actions()._stairs("降自北階", 0, "司宮", site)
    assert site.on_hall(top[0], top[1])


def test_only_a_word_after_如_is_a_likeness():
    """A text that opened on an action word and closed on 如 lost that word: the check looked
    at the character before offset 0, the text's last."""
    table = load_actions()
    assert (0, "升") in table.words_in("升堂揖如")
    assert all(word != "升" for _, word in table.words_in("降如升射之儀"))


def test_a_word_that_names_the_basin_or_the_offerings_is_no_washing(rite, sheet):
    """適洗 (to the basin), 立於洗南, 設洗於阼階東南, 奠爵於薦右 name a place or a thing: the
    washing and presenting they were heard as were not done. 至再拜 is arriving, then bowing."""
    table = load_actions()
    assert [w for _, w in table.words_in("司正適洗洗角觶")] == ["洗"]
    assert [w for _, w in table.words_in("設洗於阼階東南罍水在東篚在洗西")] == []
    assert [w for _, w in table.words_in("奠爵於薦右興")] == ["奠", "興"]
    assert [w for _, w in table.words_in("北面至再拜")] == ["再拜"]
    step = sheet.step("s19.04")  # 司正適洗洗角觶南面坐奠於中庭…: one washing, not two
    washing = [e for e in rite.events if e.cue == step.id and e.articulation == "cup"]
    assert len(washing) == 1
