"""Batch plans (``soundscape batch PLAN.toml``): many renders of the rite, each a set of
hypotheses (tuning, 黃鍾, what a 終 is, how the words are read, seed) heard from a place
in a layout.

A plan is TOML (format in docs/kit.md)::

    out = "batch"                 # folder for the files, inside the plan's folder
    [defaults]                    # any render key, for every render
    from = "s18"
    to = "s18"
    [[render]]
    id = "sanfen-c4"              # the file: <out>/<id>.wav (+ markers, loudness report)
    tuning = "sanfen_sunyi"       # or "equal"
    huangzhong_hz = 261.63        # or a preset name: convention, zeng, qing
    [[render]]
    id = "equal-zeng"
    tuning = "equal"
    huangzhong_hz = "zeng"
    zhong = "stanza"              # what one 終 of a song is: song or stanza
    reading = "mandarin"          # how the words are pronounced: middle-chinese, mandarin
    listener = "zhongting"
    layout = "binaural"
    court = "damped"              # the court's walls: bare, damped, none (default: --court)

Each render is what ``soundscape render`` writes for the same options (same bytes).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from soundscape import validate
from soundscape.errors import SoundscapeError
from soundscape.fileio import read_toml
from soundscape.kit import KitError
from soundscape.kit.batch import Job
from soundscape.music.tuning import HUANGZHONG_HZ, HUANGZHONG_RANGE_HZ, TEMPERAMENTS
from soundscape.performance import Performance
from soundscape.site.listeners import listener_at
from soundscape.sound.court import hypotheses
from soundscape.text.reading import READINGS

__all__ = ["Sequencing", "check_parts", "load_plan"]

_KEYS = {"id", "cues", "from", "to", "seed", "tuning", "huangzhong_hz", "zhong", "reading",
         "listener", "layout", "target_lufs", "court"}
_TUNINGS = tuple(TEMPERAMENTS)  # sanfen or sanfen_sunyi (三分損益), equal
_ZHONG = ("song", "stanza")
_LAYOUTS = ("stereo", "binaural", "foa", "hoa3", "ring8", "5.1")
#: A plan's own keys (each entry's are ``_KEYS``).
_PLAN_KEYS = frozenset({"out", "defaults", "render"})


@dataclass(frozen=True)
class Sequencing:
    """A picklable recipe for a Performance, made in the worker that renders it."""

    cues: str | None
    seed: int
    from_section: str | None
    to_section: str | None
    tuning: str
    huangzhong_hz: float | str
    zhong: str | None
    reading: str | None

    def __call__(self) -> Performance:
        return _sequenced(self)

    def make(self) -> Performance:
        from soundscape.music.tuning import tuning_named
        from soundscape.sequence.planner import SequenceOptions, perform_from_file

        options = SequenceOptions(zhong=self.zhong or None)
        if self.reading:
            options = replace(options, reading=self.reading)
        return perform_from_file(self.cues, seed=self.seed, from_section=self.from_section,
                                 to_section=self.to_section,
                                 tuning=tuning_named(self.tuning, self.huangzhong_hz),
                                 options=options)


@functools.lru_cache(maxsize=4)
def _sequenced(recipe: Sequencing) -> Performance:
    """Sequence once per recipe and process: renders of one hypothesis from several places
    or in several layouts share it."""
    return recipe.make()


def load_plan(path: str | Path, site, court: str = "bare") -> tuple[Path, list[Job]]:
    """The output folder and the jobs of a plan file (checked); ``court`` is the court
    hypothesis of renders that name none."""
    path = Path(path)
    data = read_toml(path, KitError)
    where = str(path)
    unknown = sorted(set(data) - _PLAN_KEYS)
    if unknown:  # a typo ([default]) would render every entry whole, unnoticed
        validate.fail(KitError, where, "key", unknown[0], "a plan key",
                      ", ".join(sorted(_PLAN_KEYS)))
    out_name = validate.text(data.get("out", "batch"), key="out", where=where, error=KitError,
                             longest=200)
    out = (path.parent / out_name).resolve()
    if not out.is_relative_to(path.parent.resolve()):
        validate.fail(KitError, where, "out", out_name, "a folder inside the plan's folder")
    defaults = data.get("defaults", {})
    validate.size(defaults, key="defaults", where=where, error=KitError, kind=dict)
    renders = validate.size(data.get("render"), key="render", where=where, error=KitError,
                            kind=list, least=1, most=1000)
    jobs = []
    for i, entry in enumerate(renders):
        validate.size(entry, key="render", where=where, error=KitError, kind=dict, least=1)
        jobs.append(_job({"court": court, **defaults, **entry}, f"{path}: [[render]] {i + 1}",
                         out, path.parent, site))
    names = [j.name for j in jobs]
    for name in names:
        if names.count(name) > 1:
            raise KitError(f"{path}: render id={name!r} is given twice; ids must differ")
    return out, jobs


def check_parts(path: str | Path, jobs: list[Job]) -> None:
    """Each render's part (``from``/``to``) is found in its performance before any render
    starts: a section missing from the fifth entry was found once four renders had been
    written. Each recipe is sequenced here once (kept for a render in this process, or a
    worker forked from it); errors name the plan and the entry."""
    for i, job in enumerate(jobs):
        recipe = job.make
        if not isinstance(recipe, Sequencing) or (recipe.from_section is None
                                                  and recipe.to_section is None):
            continue
        try:
            recipe()
        except SoundscapeError as error:
            raise KitError(f"{path}: [[render]] {i + 1} (id={job.name!r}): {error}") from None


def _job(entry: dict[str, Any], where: str, out: Path, folder: Path, site) -> Job:
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        validate.fail(KitError, where, "key", unknown[0], "a render key", ", ".join(sorted(_KEYS)))
    rid = validate.ident(entry.get("id"), key="id", where=where, error=KitError)
    cues = None
    if "cues" in entry:
        cues_path = (folder / validate.text(entry["cues"], key="cues", where=where,
                                            error=KitError, longest=500)).resolve()
        if not cues_path.is_relative_to(folder.resolve()):  # a plan is untrusted
            validate.fail(KitError, where, "cues", entry["cues"],
                          "a cue sheet inside the plan's folder")
        if not cues_path.is_file():
            validate.fail(KitError, where, "cues", entry["cues"], "a cue sheet file")
        cues = str(cues_path)
    seed = validate.whole(entry.get("seed", 0), key="seed", where=where, error=KitError, low=0,
                          high=2**32 - 1)
    tuning = validate.choice(entry.get("tuning", "sanfen_sunyi"), _TUNINGS, key="tuning",
                             where=where, error=KitError)
    hz = entry.get("huangzhong_hz", "convention")
    if isinstance(hz, str):
        validate.choice(hz, HUANGZHONG_HZ.keys(), key="huangzhong_hz", where=where,
                        error=KitError)
    else:
        hz = validate.number(hz, key="huangzhong_hz", where=where, error=KitError,
                             low=HUANGZHONG_RANGE_HZ[0], high=HUANGZHONG_RANGE_HZ[1], unit="Hz")
    zhong, reading = entry.get("zhong"), entry.get("reading")
    if zhong is not None:
        validate.choice(zhong, _ZHONG, key="zhong", where=where, error=KitError)
    if reading is not None:
        validate.choice(reading, READINGS, key="reading", where=where, error=KitError)
    sections = [validate.text(entry[k], key=k, where=where, error=KitError, longest=40)
                if k in entry else None for k in ("from", "to")]
    place = validate.ident(entry.get("listener", "gong_wei"), key="listener", where=where,
                           error=KitError, known=set(site.places))
    layout = validate.choice(entry.get("layout", "stereo"), _LAYOUTS, key="layout", where=where,
                             error=KitError)
    target = validate.number(entry.get("target_lufs", -23.0), key="target_lufs", where=where,
                             error=KitError, low=-70.0, high=0.0, unit="LUFS")
    court = validate.choice(entry["court"], (*hypotheses(), "none"), key="court", where=where,
                            error=KitError)
    return Job(rid, out / f"{rid}.wav", listener_at(site, place), layout,
               kind="render", seed=seed, options={"target_lufs": target}, court=court,
               make=Sequencing(cues, seed, sections[0], sections[1], tuning, hz, zhong,
                                reading))
