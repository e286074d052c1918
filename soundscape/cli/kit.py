"""``soundscape kit``: the museum installation kit: loop-safe programmes for the venue's
loudspeakers, captions, cue lists and show control, a manifest and a web page.

Programmes come from ``soundscape/data/programmes.toml`` (or ``--programmes FILE``);
each is rendered for each of its zones (listener places or a walk) in each ``--layout``.
"""

from __future__ import annotations

from pathlib import Path

import click

from soundscape.cli._common import SEED_MAX, FilePath, WholeRange, court_option

__all__ = ["command"]


@click.command("kit")
@click.option("--cues", type=FilePath(exists=True, dir_okay=False, path_type=Path),
              default=None, metavar="FILE",
              help="Cue sheet of the rite (default: the bundled 大射 sheet, or --rite's).")
@click.option("--rite", "rite", metavar="ID", default=None,
              help="A bundled rite instead of a cue-sheet path: dashe, xiangyinjiu, xiangshe, "
                   "yan (see `soundscape rites`).")
@click.option("--programmes", "programme_file",
              type=FilePath(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Programme file (default: the bundled soundscape/data/programmes.toml).")
@click.option("--programme", "programme_ids", multiple=True,
              help="Programme id (repeatable; default: every programme of at most 20 "
                   "minutes; --list shows them all).")
@click.option("--list", "list_only", is_flag=True,
              help="List the programmes (id, title, zones, length) and build nothing.")
@click.option("--layout", "layouts", multiple=True,
              help="stereo, binaural, foa, hoa3, 5.1, 7.1, 7.1.4, ring8, an IEM AllRADecoder .json "
              "file, or az[:el] degrees like 30:0,-30:0,0:90 (repeatable; default stereo); "
              "adm: an ADM BWF master per programme and standing zone (-18 LUFS); atmos: "
              "the same in the Dolby Atmos Master ADM Profile.")
@click.option("--listen/--no-listen", default=True, show_default=True,
              help="Write the object stems and court responses the page renders live from "
                   "(programmes up to 30 minutes).")
@click.option("-o", "--out", type=FilePath(file_okay=False, path_type=Path),
              default=Path("output/kit"), show_default=True, help="Kit folder.")
@click.option("--seed", type=WholeRange(min=0, max=SEED_MAX), default=0, show_default=True,
              help="Seed of the rite and its sound (as `render --seed`: the same loops).")
@click.option("--executor", default="local", show_default=True,
              help="local (a process pool), serial, or dask://HOST:PORT.")
@click.option("--jobs", type=WholeRange(1, 64), default=2, show_default=True,
              help="Processes of the local pool.")
@court_option
def command(cues: Path | None, rite: str | None, programme_file: Path | None,
            programme_ids: tuple[str, ...], layouts: tuple[str, ...], out: Path, seed: int,
            executor: str, jobs: int, list_only: bool, court: str,
            listen: bool) -> None:
    """Build the museum installation kit (docs/kit.md): the programmes and layouts asked
    for, in one run; it replaces the kit an earlier build made in the folder (not your files)."""
    from soundscape.kit.build import build_kit, check_request, programmes_for
    from soundscape.kit.manifest import check_court
    from soundscape.kit.programmes import load_programmes
    from soundscape.sequence.planner import perform_from_file
    from soundscape.site.courtyard import load_site

    cues = _cue_sheet(cues, rite)
    site = load_site(rite=_site_rite(cues))  # the rite's own (鄉射: the 序)
    programmes = load_programmes(programme_file, places=None if programme_file is None
                                 else set(site.places))
    check_request(programmes, programme_ids, layouts)
    check_court(court)
    performance = perform_from_file(cues, seed=seed, site=site)
    if list_only:
        _list(programmes_for(performance, site, programme_file,
                             lambda text: click.echo(text, err=True)), performance)
        return
    manifest = build_kit(out, rite=performance, site=site, programme_file=programme_file,
                         programme_ids=programme_ids, layouts=layouts or ("stereo",),
                         seed=seed, executor=executor, workers=jobs,
                         say=lambda text: click.echo(text, err=True), court=court,
                         listen=listen)
    click.echo(f"wrote {manifest.parent}/index.html and {manifest}")


def _site_rite(cues: Path | None) -> str | None:
    """The bundled rite whose site the kit's rite is played on (its sheet's ``[text] id``),
    as the other verbs take it; None: the 大射's."""
    from soundscape.cuesheet import load
    from soundscape.site.courtyard import site_of

    if cues is None:
        return None
    sheet = load(cues)
    return site_of(sheet.text.id, sheet.layout)


def _cue_sheet(cues: Path | None, rite: str | None) -> Path | None:
    """The cue sheet of ``--cues FILE`` or ``--rite ID`` (a bundled rite, as in the other
    verbs); ``--rite FILE`` (a cue sheet: the old meaning) still works, with a warning."""
    from soundscape.resources import bundled_dir
    from soundscape.text.derive.rites import rite as bundled_rite
    from soundscape.text.derive.rites import rite_ids

    if rite is not None and rite not in rite_ids() and Path(rite).is_file():
        click.echo(f"warning: kit --rite FILE is deprecated: give the cue sheet as --cues "
                   f"{rite} (--rite takes a bundled rite id: {', '.join(rite_ids())})",
                   err=True)
        if cues is not None:
            raise click.UsageError(f"give one cue sheet: --cues {cues} or --rite {rite}")
        return Path(rite)
    if rite is None:
        return cues
    if cues is not None:
        raise click.UsageError(f"give a cue sheet or --rite {rite}, not both")
    return bundled_dir("cues") / f"{bundled_rite(rite).id}.toml"


def _list(programmes, rite) -> None:
    """Print every programme (``each_music`` ones expanded) with its zones and length, and
    its description under its title (both as filled for the rite)."""
    from soundscape.cli._common import table
    from soundscape.kit.build import LONG_S, lengths

    rows = [["id", "title", "zones", "length", ""]]
    for programme, length in lengths(programmes, rite):
        minutes, seconds = divmod(round(length), 60)
        rows.append([programme.id, programme.title,
                     ", ".join(zone.id for zone in programme.zones),
                     f"{minutes}:{seconds:02d}",
                     "long: only with --programme" if length > LONG_S else ""])
    header, *lines = table(rows).splitlines()
    indent = " " * header.index("title")
    click.echo(header)
    for line, programme in zip(lines, programmes, strict=True):
        click.echo(line)
        if programme.description:  # a cell of its own: control characters made harmless
            click.echo(indent + table([[programme.description]]))
