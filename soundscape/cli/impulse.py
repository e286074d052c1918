"""``soundscape impulse``: the court's impulse response between two places, as a WAV file.

A click at the source place, heard at the listener place through the render's own path
(direct and early paths, the court's late tail), written as 32-bit float WAV (time 0 = the
click; 1.0 = 94 dB SPL at 1 m from the source), with a JSON report beside it naming the
court hypothesis and giving the ISO 3382-1 figures of its omnidirectional channel (W of an
ambisonic layout; for other layouts, of a W rendered alongside). Acousticians can measure
it with their own tools; a museum can convolve its own dry recordings with it.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from soundscape.cli._common import (
    SEATS_HELP,
    SEED_MAX,
    FilePath,
    FiniteRange,
    WholeRange,
    court_option,
    speaker_layout,
    surroundings_for,
)

__all__ = ["command"]


@click.command("impulse")
@click.option("--source", "source", required=True,
              help="Where the click is made: any place by id or Chinese name (gong_xi, "
                   "zhongting, men …); or x,y,z in metres.")
@click.option("--height", type=FiniteRange(0.0, 10.0), default=None,
              help="Height of the click above its place's floor, metres (default: a standing "
                   "mouth's, 1.5 m).")
@click.option("--listener", "place", default="gong_wei", show_default=True,
              help=f"Where the listener is: {SEATS_HELP}; or x,y,z in metres.")
@click.option("--facing", default=None,
              help="north/south/east/west, a bearing in degrees or x,y (default: the place's).")
@click.option("--layout", default="stereo", show_default=True,
              help="A layout of `soundscape render` (stereo, binaural, foa, hoa3, 5.1 …, or "
                   "azimuths).")
@court_option
@click.option("--rite", metavar="ID", default=None,
              help="A bundled rite: the response in its own site (鄉射: the 序; 燕禮: the 寢).")
@click.option("--sample-rate", "--rate", "rate", type=click.Choice(("44100", "48000", "96000")),
              default="48000", show_default=True, help="Samples a second of the response (Hz).")
@click.option("--seed", type=WholeRange(min=0, max=SEED_MAX), default=0, show_default=True,
              help="Seed of the late tail's decorrelation (as `render --seed`).")
@click.option("-o", "--out", type=FilePath(dir_okay=False, path_type=Path),
              default=Path("output/impulse.wav"), show_default=True, help="The WAV to write.")
def command(source: str, height: float | None, place: str, facing: str | None, layout: str,
            court: str, rite: str | None, rate: str, seed: int, out: Path) -> None:
    """The court's impulse response from one place to another (WAV and a JSON report)."""
    from soundscape.errors import RenderError
    from soundscape.fileio import write_text
    from soundscape.site.courtyard import load_site
    from soundscape.site.listeners import listener_at
    from soundscape.sound import iso3382
    from soundscape.sound.audiofile import write_audio
    from soundscape.sound.impulse import impulse_response
    from soundscape.sound.panning import make_panner, wav_channel_mask
    from soundscape.sound.propagation import check_within

    if out.suffix.lower() != ".wav":
        raise RenderError(f"--out {str(out)!r}: the response is written as WAV; give a .wav "
                          "ending")
    speakers = speaker_layout(layout, "impulse")
    site = load_site(rite=rite)
    point = _point(site, source, height)
    listener = listener_at(site, place, facing)
    surroundings = surroundings_for(site, court)
    check_within(surroundings, point, "--source")
    check_within(surroundings, listener.position, "--listener")
    response = impulse_response(point, listener, surroundings=surroundings, layout=speakers,
                                sample_rate=int(rate), seed=seed)
    omni = (response[:, 0] if isinstance(speakers, str) and speakers in ("foa", "hoa3")
            else impulse_response(point, listener, surroundings=surroundings, layout="foa",
                                  sample_rate=int(rate), seed=seed)[:, 0])
    measured: dict[str, float] = {}
    figures: dict[str, float | str]
    try:
        measured = iso3382.measure(omni, int(rate)).as_dict()
        figures = dict(measured)
    except RenderError as error:  # a response too short or too dry to measure
        figures = {"error": str(error)}
    mask = wav_channel_mask(make_panner(speakers))  # the speakers, as render's WAVs carry
    write_audio(out, response, int(rate), bits="float", channel_mask=mask)
    report = {"source": source, "source_point": list(point), "listener": place,
              "listener_point": list(listener.position), "layout": layout,
              "sample_rate": int(rate), "seconds": len(response) / int(rate),
              "court": court, "court_name": (surroundings.court.hypothesis.name
                                             if surroundings.court is not None else "none"),
              "site": site.name, "iso3382_mid": figures}
    write_text(out.with_name(out.name + ".json"), json.dumps(report, indent=1,
                                                             ensure_ascii=False))
    click.echo(f"wrote {out} ({len(response) / int(rate):.2f} s, {response.shape[1]} channels; "
               f"court {court})")
    if "edt" in measured:
        click.echo("EDT {edt:.2f} s, T20 {t20:.2f} s, C80 {c80:+.1f} dB, D50 {d50:.2f}, "
                   "echo period {echo:.2f} s (500 Hz–1 kHz)".format(**measured))
    else:  # too short or too dry to measure (--court none): say why, not only in the JSON
        click.echo(f"note: no ISO 3382 figures: {figures['error']}", err=True)


def _point(site, source: str, height: float | None) -> tuple[float, float, float]:
    from soundscape.errors import RenderError
    from soundscape.site.listeners import place_id
    from soundscape.sound.court import source_point

    if "," in source:
        from soundscape.site.listeners import MAX_METRES, checked_position

        try:
            return checked_position(tuple(float(v) for v in source.split(",")), "--source")
        except ValueError:  # not numbers, or not three finite metres near the hall
            raise RenderError(f"--source {source!r}: coordinates must be x,y,z in metres "
                              f"within {MAX_METRES:g} m of the hall") from None
    return source_point(site, place_id(site, source), height)
