"""``soundscape plan``: draw the courtyard, targets and placed orchestra (SVG and PNG)."""

from __future__ import annotations

from pathlib import Path

import click

from soundscape.cli._common import SEATS_HELP, FilePath, say_data
from soundscape.resources import bundled_dir

__all__ = ["command"]


def site_rite(rite: str) -> str:
    """The id of bundled rite ``rite`` (raises, listing the rites, when unknown)."""
    from soundscape.text.derive.rites import rite as bundled_rite

    return bundled_rite(rite).id


def _out_path(_ctx: click.Context, _param: click.Parameter, value: Path | None
              ) -> Path | None:
    """Refuse an ``--out`` that ends in neither .svg nor .png (usage error, exit 2)."""
    from soundscape.errors import RenderError
    from soundscape.output import plan

    if value is None:
        return None
    try:
        plan.output_paths(value)
    except RenderError as error:
        raise click.BadParameter(str(error)) from None
    return value


@click.command("plan")
@click.option("-o", "--out", type=FilePath(dir_okay=False, path_type=Path),
              default=None, callback=_out_path,
              help="Where to write, ending .svg or .png: both the SVG and the PNG of "
              "that name are written (default output/plan.svg for the 大射, else "
              "output/NAME.plan.svg: the --rite's id or the --cues sheet's name).")
@click.option("--listener", "place", default=None,
              help=f"Where a listener sits: {SEATS_HELP}. Draws the direction and distance "
              "to every source.")
@click.option("--cues", type=FilePath(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Cue sheet whose [[layout]] places the orchestra "
              "(default: the bundled cues/dashe.toml, or the --rite's sheet).")
@click.option("--rite", "rite", metavar="ID", default=None,
              help="A bundled rite: its site (鄉射 in the 序 with one 侯 at 五十弓, 燕禮 in the "
                   "寢, 鄉飲酒 in the 庠; see docs/rites.md) and its cue sheet. A --cues sheet "
                   "of a bundled rite ([text] id) is drawn on that rite's site too.")
@click.option("--overrides", type=FilePath(exists=True, dir_okay=False, path_type=Path),
              default=None, help="TOML file moving places or instruments (see docs/site.md).")
@click.option("--chi-m", type=float, default=None,
              help="Length of one 尺 in metres (default 0.231, the Eastern Zhou ruler).")
def command(out: Path | None, place: str | None, cues: Path | None, rite: str | None,
            overrides: Path | None, chi_m: float | None) -> None:
    """Draw the site: hall, steps, targets and shelters with distances, every instrument
    with its names, facing and struck face, the musicians' places, scale bars, north."""
    from soundscape import cuesheet, site
    from soundscape.output import plan
    from soundscape.site import orchestra
    from soundscape.site.listeners import place_id
    from soundscape.text.derive.rites import rite_ids

    name = cues.stem if cues is not None else rite  # another rite's plan beside the 大射's
    out = out or Path("output/plan.svg" if name in (None, "dashe") else f"output/{name}.plan.svg")
    if rite is not None and cues is None:
        cues = bundled_dir("cues") / f"{site_rite(rite)}.toml"
    say_data(cues=cues, overrides=overrides)
    sheet = cuesheet.load(cues if cues is not None else cuesheet.bundled_path())
    if rite is None and sheet.text.id in rite_ids():
        rite = sheet.text.id
    courtyard = site.load_site(chi_m=site.CHI_M if chi_m is None else chi_m,
                               overrides=overrides, rite=rite)
    if place is not None:
        place = place_id(courtyard, place)  # id or Chinese name
    placed = orchestra.place(sheet.layout, courtyard)
    svg, png = plan.draw_plan(courtyard, placed, out, listener=place)
    targets = ", ".join(f"{courtyard.place_info(t.id).name} "
                        f"{courtyard.in_units(t.distance, t.unit):.0f} {t.unit} "
                        f"({t.distance:.1f} m)" for t in courtyard.targets.values())
    click.echo(f"wrote {svg} and {png} ({courtyard.name or 'site'}: {len(placed)} instruments; "
               f"targets: {targets or 'none'})")
