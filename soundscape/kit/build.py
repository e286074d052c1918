"""The whole kit: every programme × zone × layout rendered as a loop, with its captions,
cue lists, layout files, the web page and the manifest (``soundscape kit``).

Files in the kit folder (``<p>`` programme id, ``<z>`` zone, ``<l>`` layout):

- ``<p>.<z>.<l>.wav`` (or ``….chNN-MM.wav`` when split), the loops;
- ``<p>.<z>.adm.wav`` with ``--layout adm``: the programme's ADM BWF master heard from each
  standing zone (``adm_render.render_adm``, as ``soundscape render --layout adm``: objects,
  the ambience and the bare court's reverberation as an HOA bed, at ``ADM_TARGET_LUFS``; a
  walking zone has no listener's frame to place objects in, so it gets none);
  ``<p>.<z>.atmos.wav`` with ``--layout atmos``: the same in the Dolby Atmos Master ADM
  Profile (``render --layout atmos``);
- ``<p>.<z>.vtt`` / ``.srt``, captions; ``<p>.cues.json`` / ``.csv``, the cue list;
- ``<p>.performance.json``, what the programme plays (every sound traced to its cue);
- ``layouts/<l>.json``, loudspeaker layouts in the IEM AllRADecoder format;
- ``<p>.listen/stem.NN.KKK.flac`` and ``listen/ir.<zone>.<spot>.<pair>.flac``, what the page renders
  live from wherever the visitor stands (``kit.listen``; programmes up to ``LISTEN_S``);
- ``index.html`` and ``web/``, the page; ``manifest.json``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from soundscape import validate
from soundscape.kit import KitError
from soundscape.kit.batch import Job, run_jobs
from soundscape.kit.captions import captions, write_srt, write_vtt
from soundscape.kit.loop import LoopResult
from soundscape.kit.manifest import begin, finish
from soundscape.kit.programmes import (
    Programme,
    cut,
    expand,
    fill,
    first_sound,
    fitting,
    for_rite,
    lead_in,
    load_programmes,
    loop_length,
    spans,
)
from soundscape.kit.showcontrol import cue_list, write_cue_csv, write_cue_json
from soundscape.kit.speakers import SpeakerLayout, layout_from_text, write_iem
from soundscape.performance import Performance
from soundscape.sound.adm import MASTER_LAYOUTS

__all__ = ["ADM_TARGET_LUFS", "LONG_S", "Built", "build_kit", "check_request", "layout_name",
           "lengths"]

#: A programme longer than this (s) is built only when asked for by id: the whole rite
#: alone is 2½ hours of audio per zone and layout.
LONG_S = 20 * 60.0
#: The ADM masters' loudness: the Dolby Atmos delivery's −18 LKFS (docs/render.md).
ADM_TARGET_LUFS = -18.0


@dataclass(frozen=True)
class Built:
    """One programme as built: its part of the rite, loop length, parts on the rite's
    clock (the first with its lead), the lead before the first part's own start, where
    the loop's first sound comes in (its restart), and per zone and layout the job and
    its result."""

    programme: Programme
    performance: Performance
    length_s: float
    parts: list[tuple[float, float]]
    renders: list[tuple[str, str, Job, LoopResult | None]]
    lead_s: float = 0.0
    restart_s: float = 0.0
    masters: list[list] = field(default_factory=list)  # [zone, job, result] (adm, atmos)


def layout_name(layout: str | SpeakerLayout) -> str:
    return layout if isinstance(layout, str) else layout.name


def build_kit(out: str | Path, *, rite: Performance, site, programme_file: str | Path | None =
              None, programme_ids: Sequence[str] = (), layouts: Sequence[str] = ("stereo",),
              seed: int = 0, executor: str = "local", workers: int = 2,
              say: Callable[[str], None] = lambda text: None, court: str = "bare",
              listen: bool = True) -> Path:
    """Build the kit into ``out`` and return the manifest's path (see module); every loop
    is heard in the court hypothesis ``court`` (``render --court``), which the manifest
    names."""
    out = Path(out)
    programmes = _chosen(programmes_for(rite, site, programme_file, say), programme_ids)
    if not programme_ids:
        long = {p.id: length for p, length in lengths(programmes, rite) if length > LONG_S}
        if long:
            say(f"left out the long programmes ({len(long)}, over {LONG_S / 60:.0f} min): "
                + ", ".join(f"{pid} ({length / 60:.0f} min)" for pid, length in long.items())
                + "; build one with --programme ID (`soundscape kit --list` lists them)")
        programmes = [p for p in programmes if p.id not in long]
    master_layouts = [text for text in layouts if text in MASTER_LAYOUTS]
    speaker_layouts = [layout_from_text(text) for text in layouts
                       if text not in MASTER_LAYOUTS]
    names = [layout_name(x) for x in speaker_layouts]
    if len(set(names)) != len(names):
        raise KitError(f"--layout {', '.join(layouts)}: two layouts have the same name")
    built: list[Built] = []
    jobs: list[Job] = []
    for programme in programmes:
        own = spans(programme, rite)
        parts = lead_in(rite, own, programme.lead_s)
        lead = own[0][0] - parts[0][0]
        restart = first_sound(rite, parts[0][0])
        part, length = cut(rite, parts, programme.gap_s)
        renders: list[tuple[str, str, Job, LoopResult | None]] = []
        for zone in programme.zones:
            for layout in speaker_layouts:
                name = f"{programme.id}.{zone.id}.{layout_name(layout)}"
                job = Job(name, out / f"{name}.wav", zone.listener(site), layout,
                          performance=part, seed=seed, court=court, options={
                              "length_s": length, "calibration_lufs": programme.calibration_lufs,
                              "ceiling_dbtp": programme.ceiling_dbtp, "restart_s": restart})
                renders.append((zone.id, layout_name(layout), job, None))
                jobs.append(job)
        masters = [found for layout in master_layouts
                   for found in _masters(out, programme, part, site, seed, say, court, layout)]
        jobs.extend(job for _, job, _ in masters)
        built.append(Built(programme, part, length, parts, renders, lead, restart, masters))
    mastered = sum(len(item.masters) for item in built)
    begin(out)  # from here the folder is being rebuilt: no manifest until it is whole
    loops = _counted(len(jobs) - mastered, "loop")
    say(f"rendering {loops} and {_counted(mastered, 'ADM master')} ({executor}, "
        f"{_counted(workers, 'worker')})" if mastered else
        f"rendering {loops} ({executor}, {_counted(workers, 'worker')})")
    results = iter(run_jobs(jobs, executor=executor, workers=workers,
                            progress=lambda job: say(f"  {job.path.name}")))
    for item in built:
        item.renders[:] = [(zone, layout, job, next(results))
                           for zone, layout, job, _ in item.renders]
        for _, _, job, result in item.renders:  # the manifest says so too (at_calibration)
            if result is not None and not result.at_calibration:
                say(f"  {job.path.name}: {result.output_lufs:.1f} LUFS, not its calibration's "
                    f"{result.calibration_lufs:.1f}: the true-peak ceiling "
                    f"({result.ceiling_dbtp:g} dBTP) stopped the gain (docs/kit.md)")
        for found in item.masters:
            found[2] = next(results)
        _sidecars(out, item, site, _section_at(rite, item.parts[0][0]))
    layouts_written = [write_iem(layout, out / "layouts" / f"{layout.name}.json")
                       for layout in speaker_layouts if isinstance(layout, SpeakerLayout)]
    from soundscape.kit.web import write_page
    heard = _listen(out, built, site, seed, say, court) if listen else None
    write_page(out, built, site, listen=heard, rite=rite.info.title or "大射儀")
    return finish(out, rite, built, court=court, layouts=layouts_written,
                  listen=_listen_files(out, heard))


def _masters(out: Path, programme: Programme, part: Performance, site, seed: int,
             say: Callable[[str], None], court: str, layout: str = "adm") -> list[list]:
    """The programme's ADM master jobs in ``layout`` (``MASTER_LAYOUTS``), one per standing
    zone (see the module)."""
    from soundscape.sound.court import load_court
    from soundscape.sound.propagation import Surroundings

    surroundings = (Surroundings() if court == "none"
                    else Surroundings(court=load_court(site, court)))
    masters = []
    for zone in programme.zones:
        if zone.waypoints:
            say(f"  {programme.id}.{zone.id}: a walk, no ADM master (objects need a standing "
                "listener's frame)")
            continue
        name = f"{programme.id}.{zone.id}.{layout}"
        masters.append([zone.id, Job(name, out / f"{name}.wav", zone.listener(site), layout,
                                     kind="adm", performance=part, seed=seed, options={
                                         "surroundings": surroundings,
                                         "target_lufs": ADM_TARGET_LUFS,
                                         "ceiling_dbtp": programme.ceiling_dbtp,
                                         "profile": MASTER_LAYOUTS[layout]}), None])
    return masters


def _listen(out: Path, built: list[Built], site, seed: int, say: Callable[[str], None],
            court_name: str = "bare") -> dict:
    """The page's live listening: the responses of the court the loops are heard in
    (``court_name``; ``none``: the direct sound alone, no responses) and each short
    programme's stems."""
    from soundscape.kit.listen import LISTEN_S, court_responses, write_stems
    from soundscape.sound.court import load_court

    court = None if court_name == "none" else load_court(site, court_name)
    if court is None:
        say("no court responses for the page (--court none: the direct sound alone)")
    else:
        say(f"court responses for the page ({court.name} court)")
    found: dict[str, Any] = {
        "court": court_name, "programmes": {},
        "responses": [] if court is None else court_responses(out / "listen", court,
                                                               seed=seed)}
    for item in built:
        if item.length_s > LISTEN_S:
            say(f"  {item.programme.id}: no stems (over {LISTEN_S / 60:.0f} min)")
            continue
        say(f"  {item.programme.id}.listen: stems")
        first = item.programme.zones[0].listener(site).at(0.0).position
        found["programmes"][item.programme.id] = write_stems(
            out / f"{item.programme.id}.listen", item.performance, court=court,
            listen_at=first, seed=seed, calibration_lufs=item.programme.calibration_lufs)
    return found


def _listen_files(out: Path, heard: dict | None) -> list[Path]:
    """The files of the page's live listening (:func:`_listen`): responses and stems."""
    if heard is None:
        return []
    return ([out / name for response in heard["responses"] for name in response["files"]]
            + [out / name for found in heard["programmes"].values()
               for stem in found["stems"] for name in stem["files"] if name is not None])


def check_request(programmes: tuple[Programme, ...], ids: Sequence[str],
                  layouts: Sequence[str]) -> None:
    """Refuse unknown programme ids and bad layouts before the (slow) sequencing; an id
    ``<p>.<cue>`` of an ``each_music`` programme ``p`` is checked once the music is known."""
    families = tuple(f"{p.id}." for p in programmes if p.each_music)
    known = {p.id for p in programmes}
    for pid in ids:
        if pid not in known and not pid.startswith(families):
            validate.ident(pid, key="--programme", where="soundscape kit", error=KitError,
                           known=known | {f"{f}<cue>" for f in families})
    for text in layouts:
        if text not in MASTER_LAYOUTS:
            layout_from_text(text)


def programmes_for(rite: Performance, site, programme_file: str | Path | None = None,
                   say: Callable[[str], None] = lambda text: None) -> tuple[Programme, ...]:
    """The programmes of ``programme_file`` (``each_music`` ones expanded) for ``rite`` on its
    ``site``, each as its ``[programme.rite.ID]`` gives it for the rite, its placeholders
    filled (``for_rite``, ``fill``). The bundled file is written for every bundled rite:
    with another, what it cannot play is left out and said (``fitting``); a file of the
    user's is taken as written."""
    places = None if programme_file is None else set(site.places)
    programmes = expand(tuple(for_rite(p, rite.info.text) for p in
                              load_programmes(programme_file, places=places)), rite)
    if programme_file is None:
        programmes, notes = fitting(programmes, rite, site)
        for note in notes:
            say(note)
    return tuple(fill(p, rite, site) for p in programmes)


def lengths(programmes, rite: Performance) -> list[tuple[Programme, float]]:
    """Each programme with its loop's length in seconds (lead and gaps included)."""
    return [(programme, loop_length(programme, rite)) for programme in programmes]


def _chosen(programmes: tuple[Programme, ...], ids: Sequence[str]) -> list[Programme]:
    if not ids:
        return list(programmes)
    known = {p.id for p in programmes}
    for pid in ids:
        validate.ident(pid, key="--programme", where="soundscape kit", error=KitError,
                       known=known)
    return [p for p in programmes if p.id in ids]


def _section_at(rite: Performance, time: float) -> str:
    """The section of the rite that is on at ``time`` (the last to start by then)."""
    started = [s.id for s in rite.sections if s.start <= time]
    return started[-1] if started else ""


def _sidecars(out: Path, item: Built, site, section: str) -> None:
    programme, performance = item.programme, item.performance
    for zone in programme.zones:
        where = zone.listener(site).at(0.0).position
        found = captions(performance, listener_at=where)
        write_vtt(found, out / f"{programme.id}.{zone.id}.vtt")
        write_srt(found, out / f"{programme.id}.{zone.id}.srt")
    cues = cue_list(performance, section)
    audio = [f.name for _, _, _, result in item.renders if result is not None
             for f in result.files]
    write_cue_json(cues, out / f"{programme.id}.cues.json", programme=programme.id, audio=audio)
    write_cue_csv(cues, out / f"{programme.id}.cues.csv")
    performance.save_json(out / f"{programme.id}.performance.json")


def _counted(count: int, noun: str) -> str:
    """``1 loop``, ``2 loops``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"
