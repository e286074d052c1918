"""Who plays what, and where: the sources of a performance and the choice of player per note.

The orchestra comes from the cue sheet's 設樂 (``orchestra.place``); the 工 are
as many as the text's forces say (大射 工六人四瑟: 大師, 少師 and four 上工 with
their 瑟; 鄉飲酒 工四人二瑟: two who sing and two who play, 鄭注: 二瑟，二人鼓瑟，則二人歌也)
and move as the text moves them: on their mats 西階上少東 for the songs, below at
鼓北 for 管新宮, then seated 東坫之東南; the 負侯 stand at the targets where the
text has them answer. Which placed instrument sounds a note of an arrangement is
decided here by a few stated rules (see :func:`Players.assign`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from soundscape.cuesheet import CueSheet, MusicCue
from soundscape.errors import CueSheetError
from soundscape.music.arrange import TimedNote
from soundscape.music.repertoire import Piece
from soundscape.performance import Source, Vec3
from soundscape.site import orchestra
from soundscape.site.courtyard import Site
from soundscape.text.derive.formulas import rules as derive_rules
from soundscape.text.derive.generic import by_family, is_placeable
from soundscape.text.hanzi import canonical

__all__ = ["Players", "build_players", "printed_pattern", "wusuan_turn"]

# The 工 of the text (工六人四瑟): the two masters sing, the four 上工 play 瑟.
_SINGERS = ("dashi", "shaoshi")
_SE_PLAYERS = ("shanggong.1", "shanggong.2", "shanggong.3", "shanggong.4")
_TARGETS = ("dahou", "can", "gan")
# Instruments that answer each other stroke by stroke rather than phrase by phrase.
_ANSWERING = ("pi",)
# Instruments whose players all sound every note: the 工's voices and 瑟, and the 笙 that
# make one sound together (鄉射禮 記: 三笙一和而成聲).
_UNISON = ("voice", "se", "sheng")
# The 工 of a rite whose text gives no forces: the 大射's 工六人四瑟.
_DEFAULT_FORCES = {"gong": 6, "se": 4}


@dataclass
class Players:
    """The placed sources and the rules that pick a source for a note.

    Attributes
    ----------
    sources : dict of id → Source
        Every source so far; the 工's moves are added with :meth:`move_gong`.
    placed : mapping of layout id → PlacedInstrument
        Racks hang one bell or stone per pitch (``member_for``).
    """

    sources: dict[str, Source]
    placed: Mapping[str, orchestra.PlacedInstrument]
    forces: Mapping[str, int] = field(default_factory=lambda: dict(_DEFAULT_FORCES))
    _strokes: dict[str, int] = field(default_factory=dict)  # 鼙 strokes so far, per cue

    def candidates(self, cue: MusicCue, note: TimedNote) -> tuple[str, ...]:
        """The sources that may sound ``note`` of ``cue``, in the cue's performer order.

        A part whose id names a layout entry (``shuopi`` → ``west.shuopi``) plays there;
        otherwise every performer of the cue with the note's instrument; the 工 and 瑟
        performers stand for the singers and the 瑟 players. If the cue lists none with
        that instrument, any placed instrument of it will do — unless the cue names
        instruments of the 設樂 among its performers: then they are the ones who play
        (鄉 rites: 陔 on the drum alone, though the 磬 hangs there; 鄭注: 大夫士鼓而已).
        """
        named = [p for p in self.placed if p.rsplit(".", 1)[-1] == note.part]
        if named and note.instrument not in _UNISON:  # all the cue's 笙 play its 笙 part
            return tuple(named)
        ids = []
        for performer in cue.performers:
            ids += self._performer_sources(performer, {**self.forces, **dict(cue.forces)})
        fitting = [i for i in ids if self.sources[i].instrument == note.instrument]
        if fitting:
            return tuple(fitting)
        anywhere = [i for i, s in self.sources.items() if s.instrument == note.instrument
                    and i in self.placed]
        if anywhere and any(p in self.placed for p in cue.performers):
            return ()  # the cue says which of the hung instruments play; this one does not
        if not anywhere and not any(s.instrument == note.instrument
                                    for s in self.sources.values()):
            return ()  # the rite has no such instrument
        if not anywhere:
            raise CueSheetError(
                f"music cue {cue.id!r}: no performer plays {note.instrument!r} (part "
                f"{note.part!r}); performers: {', '.join(cue.performers)}")
        return tuple(anywhere)

    def assign(self, cue: MusicCue, note: TimedNote) -> tuple[str, ...]:
        """The source(s) that sound ``note``.

        Voices, 瑟 and 笙 play in unison (every singer, every 瑟, every 笙); an instrument the
        orchestra has more than once (two bell racks, three 建鼓) answers phrase by
        phrase in turn, starting with the first performer the cue names (a stated
        reconstruction: the text places the racks east and west, not who plays when).
        """
        found = self.candidates(cue, note)
        if not found or note.instrument in _UNISON:
            return found
        if note.instrument in _ANSWERING and note.role not in ("call", "answer"):
            # 鄭注: 應鼙應朔鼙也: the 鼙 answer one another stroke by stroke
            strokes = self._strokes.get(cue.id, 0)
            self._strokes[cue.id] = strokes + 1
            return (found[strokes % len(found)],)
        phrase = max(note.phrase, 0)
        return (found[phrase % len(found)],)

    def position(self, source_id: str, note: TimedNote) -> Vec3 | None:
        """Where on its rack the note's bell or stone hangs (None for single instruments)."""
        rack = self.placed.get(source_id)
        if rack is None or len(rack.members) < 2 or note.pitch is None:
            return None
        return rack.member_for(note.pitch.name)

    def names(self, cue: MusicCue, instrument: str) -> bool:
        """Whether ``cue`` names among its performers a source of ``instrument``."""
        return any(p in self.sources and self.sources[p].instrument == instrument
                   for p in cue.performers)

    def plays(self, performer: str) -> bool:
        """Whether ``performer`` (a layout id, an instrument id, gong or se) has sources."""
        try:
            return bool(self._performer_sources(performer, self.forces))
        except CueSheetError:
            return False

    def _performer_sources(self, performer: str, forces: Mapping[str, int]) -> list[str]:
        """The sources of a performer; the forces the text gives choose how many: of
        工四人二瑟 two play the 瑟 and two sing (鄭注 on 鄉飲酒禮: 二瑟，二人鼓瑟，則二人歌也)."""
        singers, se = _gong_split(forces)
        if performer == "gong":
            return [f"gong.{who}" for who in _SINGERS[:singers]]
        if performer == "se":
            return [f"gong.{who}" for who in _SE_PLAYERS[:se]]
        if performer in self.sources:
            return [performer]
        hung = [i for i, s in self.sources.items()
                if s.instrument == performer and i in self.placed]
        if hung:  # an instrument id: the layout's instruments of it (a sheet with no 設樂)
            return hung
        raise CueSheetError(f"performer {performer!r} is neither a layout id, an instrument "
                            "id nor gong/se")

    def move_gong(self, time: float, phase: str, site: Site) -> None:
        """From ``time`` on, the 工 stand as in ``phase`` (ge, guan, zuo)."""
        for id_, source in list(self.sources.items()):
            if source.group != "gong":
                continue
            who = id_.split(".", 1)[1]
            where = site.performer_position(who, phase).position
            moves = (*(m for m in source.moves if m[0] < time), (time, where))
            self.sources[id_] = _with_moves(source, moves)


def printed_pattern(piece: Piece, cue: MusicCue) -> Piece:
    """``piece`` with the drum pattern its cue read from the edition's print (a condition
    ``鼓節:LABEL:○□…``, ``text.derive.notation``) in place of its own, else as it is: ○
    the 鼙, □ the 鼓 (鄭注: 圜者擊鼙，方者擊鼓), the 半 kept as the pattern's half."""
    table = derive_rules()["notation"]
    printed = next((c for c in cue.conditions
                    if canonical(c).startswith(canonical(table["condition"]))), None)
    if printed is None or piece.jie is None:
        return piece
    label, symbols = printed[len(table["condition"]):].split(":", 1)
    own = piece.jie.pattern
    half = symbols.find(table["half"])
    pattern = replace(own, id="printed", name=label, strokes=symbols.replace(table["half"], ""),
                      half=half if half >= 0 else len(symbols),
                      caution="read from the edition the cue sheet was derived from")
    return replace(piece, jie=replace(piece.jie, pattern=pattern))


def wusuan_turn(cue: MusicCue, arrangement, note: TimedNote, sheng: bool) -> str:
    """Who takes a stanza of 無算樂 where the rite has 笙 (``sheng``): ``合`` (song, 瑟 and
    笙 together), ``間`` (the 笙 alone, the song and 瑟 resting), else "" (no 笙). The ways
    are the cue's conditions, read by derive from the 鄭注 on 無算樂 (鄉飲酒禮: 或間或合; 燕禮,
    大射儀: 升歌間合; 鄉射禮: 合鄉樂, 合 alone); with both, stanzas take turns, 合 first (the
    order is ours: 鄭注 says only 或間或合, 無次數)."""
    read = {canonical(c) for c in cue.conditions}  # 间 in a sheet derived from 简体
    ways = [w for w in ("合", "間") if w in read] if cue.kind == "wusuan" else []
    if not sheng or not ways or note.phrase < 0:
        return ""
    stanza = arrangement.phrases[note.phrase].stanza
    return ways[stanza % len(ways)]


def _with_moves(source: Source, moves: tuple[tuple[float, Vec3], ...]) -> Source:
    fields = {name: getattr(source, name) for name in Source.__slots__}
    return Source(**{**fields, "moves": moves})


def _gong_split(forces: Mapping[str, int]) -> tuple[int, int]:
    """(singers, 瑟 players) of the 工 the forces give: of 工四人二瑟 two sing, two play."""
    se = min(forces.get("se", len(_SE_PLAYERS)), len(_SE_PLAYERS))
    singers = max(1, forces.get("gong", se + len(_SINGERS)) - se)
    return min(singers, len(_SINGERS)), se


def _sheet_forces(sheet: CueSheet) -> dict[str, int]:
    """The 工 of the rite: the largest forces any of its music cues states (the text says
    工四人二瑟 once, as the 工 come in), else the 大射's six and four."""
    stated = [dict(cue.forces) for cue in sheet.music if cue.forces]
    if not stated:
        return dict(_DEFAULT_FORCES)
    return max(stated, key=lambda f: (f.get("gong", 0), f.get("se", 0)))


def build_players(sheet: CueSheet, site: Site) -> Players:
    """Place the orchestra of ``sheet`` on ``site`` and add the 工 its forces name and,
    where the text has them answer, the 負侯 (no source stands there silent)."""
    placed = orchestra.place([*sheet.layout, *_by_rule(sheet)], site)
    sources = orchestra.sources(placed)
    forces = _sheet_forces(sheet)
    sources.update(_gong_sources(site, _gong_needed(sheet, forces, site)))
    if any(voice.actor == "fuhou" for voice in sheet.voices):
        sources.update(_fuhou_sources(site))
    return Players(sources, placed, forces)


def _by_rule(sheet: CueSheet) -> list:
    """Layout entries for the instruments the sheet's music names by id (``bianzhong``,
    ``sheng``) that its 設樂 does not hang: each placed by its family's rule
    (``text.derive.generic``, ``data/generic_layout.toml``), quoting the music that needs
    it, so that a sheet without a 設樂 sounds instead of stopping."""
    hung = {item.instrument for item in sheet.layout}
    ids = {item.id for item in sheet.layout}
    rows: dict[str, str] = {}
    added = []
    for cue in sheet.music:
        for performer in cue.performers:
            if (performer not in ids and performer not in hung and is_placeable(performer)):
                added.append(by_family(performer, cue.quote, cue.span,
                                       f"music {cue.id!r} names it; the sheet does not hang it",
                                       rows))
                hung.add(performer)
    return added


def _gong_needed(sheet: CueSheet, forces: Mapping[str, int], site: Site) -> tuple[int, int]:
    """(singers, 瑟 players) enough for every cue: a cue may state more than the rest
    (one song with four 瑟 where the others have two), and each plays as it states; a cue
    asking more than the site seats (燕禮's 寢: 工四人二瑟) is refused at its line."""
    members = {who for who, _ in site.performers}
    seats = (sum(who in members for who in _SINGERS), sum(who in members for who in _SE_PLAYERS))
    needed = _gong_split(forces)
    for cue in sorted(sheet.music, key=lambda c: not c.forces):  # a cue stating forces is
        split = _gong_split({**forces, **dict(cue.forces)})  # named before those given them
        # gong counts the whole 工 (singers and 瑟 players), se the 瑟 players
        for key, asked, most, over in (("gong", split[0] + split[1], seats[0] + split[1],
                                        split[0] > seats[0]),
                                       ("se", split[1], seats[1], split[1] > seats[1])):
            if over:
                raise CueSheetError(
                    f"{sheet.path or 'the cue sheet'}:{cue.line}: music {cue.id!r} forces."
                    f"{key}={dict(cue.forces).get(key, asked)} must be ≤ {most} (the site "
                    f"seats {seats[0]} singers and {seats[1]} 瑟 players of the 工)")
        needed = (max(needed[0], split[0]), max(needed[1], split[1]))
    return needed


def _gong_sources(site: Site, needed: tuple[int, int]) -> dict[str, Source]:
    singers, se = needed
    made = {}
    for who in _SINGERS[:singers] + _SE_PLAYERS[:se]:
        where = site.performer_position(who, "ge")
        instrument = "voice" if who in _SINGERS else "se"
        name = dict(site.performers).get(who, who)
        made[f"gong.{who}"] = Source(
            f"gong.{who}", instrument, f"工 {name}", f"gong {who} ({instrument})", "gong",
            where.position, where.facing, cue="gong")
    return made


def _fuhou_sources(site: Site) -> dict[str, Source]:
    made = {}
    for target in _TARGETS:
        x, y, _ = site.place(target)
        made[f"voice.fuhou.{target}"] = Source(
            f"voice.fuhou.{target}", "voice", f"負侯 {_target_name(target)}",
            f"fuhou at {target}", "voice", (x, y, site.people["standing_mouth"]),
            (0.0, 1.0, 0.0), cue="fuhou")
    return made


def _target_name(target: str) -> str:
    return {"dahou": "大侯", "can": "參", "gan": "干"}[target]
