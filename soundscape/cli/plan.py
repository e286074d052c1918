"""``soundscape plan``: draw the courtyard, targets and placed orchestra (SVG and PNG)."""

from __future__ import annotations

from pathlib import Path

import click

from soundscape.cli._common import SEATS_HELP, place_id, say_data

__all__ = ["command"]


def _out_path(_ctx: click.Context, _param: click.Parameter, value: Path) -> Path:
    """Refuse an ``--out`` that ends in neither .svg nor .png (usage error, exit 2)."""
    from soundscape.errors import RenderError
    from soundscape.output import plan

    try:
        plan.output_paths(value)
    except RenderError as error:
        raise click.BadParameter(str(error)) from None
    return value


@click.command("plan")
@click.option("-o", "--out", type=click.Path(dir_okay=False, path_type=Path),
              default=Path("output/plan.svg"), show_default=True, callback=_out_path,
              help="Where to write, ending .svg or .png: both the SVG and the PNG of "
              "that name are written.")
@click.option("--listener", "place", default=None,
              help=f"Where a listener sits: {SEATS_HELP}. Draws the direction and distance "
              "to every source.")
@click.option("--cues", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Cue sheet whose [[layout]] places the orchestra "
              "(default: the bundled cues/dashe.toml).")
@click.option("--overrides", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="TOML file moving places or instruments (see docs/site.md).")
@click.option("--chi-m", type=float, default=None,
              help="Length of one 尺 in metres (default 0.231, the Eastern Zhou ruler).")
def command(out: Path, place: str | None, cues: Path | None, overrides: Path | None,
            chi_m: float | None) -> None:
    """Draw the site: hall, steps, targets and shelters with distances, every instrument
    with its names, facing and struck face, the musicians' places, scale bars, north."""
    from soundscape import cuesheet, site
    from soundscape.output import plan
    from soundscape.site import orchestra

    courtyard = site.load_site(chi_m=site.CHI_M if chi_m is None else chi_m,
                               overrides=overrides)
    if place is not None:
        place = place_id(courtyard, place)
    say_data(cues=cues, overrides=overrides)
    sheet = cuesheet.load(cues if cues is not None else cuesheet.bundled_path())
    placed = orchestra.place(sheet.layout, courtyard)
    svg, png = plan.draw_plan(courtyard, placed, out, listener=place)
    click.echo(f"wrote {svg} and {png} ({len(placed)} instruments)")
