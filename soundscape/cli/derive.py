"""``soundscape derive [TEXT] [-o FILE]``: derive a cue sheet from a text."""

from __future__ import annotations

from pathlib import Path

import click

from soundscape import cuesheet, text
from soundscape.cli._common import FilePath, counted
from soundscape.errors import CueSheetError
from soundscape.fileio import write_text
from soundscape.resources import PROJECT_MARKER, data_dir, project_dir
from soundscape.text import commentary
from soundscape.text.derive import derive, rites, unscored_music
from soundscape.text.derive.recognise import chapter_of, lacking, only_the_rite, unmatched

__all__ = ["DEFAULT_OUTPUT", "command", "set_aside_report", "unplayable"]

# Relative to the project folder, so an installed package is never written.
DEFAULT_OUTPUT = Path("cues") / "dashe.toml"
_MARKER_TEXT = ("# A soundscape project folder: its cues/ and instruments/ are used before the\n"
                "# data bundled with the package (see `soundscape --help`).\n")


_KINDS = {"題解": "introduction (題解)", "注釋": "numbered notes (注釋)",
          "譯文": "modern translation (譯文)", "疏": "sub-commentary (疏)",
          "注": "commentary (注: run on after the 經文, or on lines labelled 注：, 按：, 【注】 …)",
          "卷題": "title and heading lines of the book (卷題)"}


def _project_output() -> Path:
    """cues/dashe.toml in the project folder; outside one, make the working directory one."""
    project = project_dir()
    if project is None:
        project = Path.cwd()
        write_text(project / PROJECT_MARKER, _MARKER_TEXT)
        click.echo(f"note: wrote {PROJECT_MARKER} here: this folder's cues/ and instruments/ "
                   "now come before the bundled ones", err=True)
    return project / DEFAULT_OUTPUT


def _shown(source: str) -> str:
    """The text's path as a cue sheet's header records it: relative to the package or the
    project folder, so that no machine's absolute path goes into a shared file."""
    path = Path(source)
    if not path.is_absolute():
        return source
    for base in (data_dir().parents[1], project_dir()):
        if base is not None and path.is_relative_to(base):
            return str(path.relative_to(base))
    return path.name


def _shooting_found(sheet: cuesheet.CueSheet, rite_id: str, source: str) -> None:
    """Say so when the text's shooting rounds are not all found as the bundled rite's are
    (each by its words: the 司射's command, then 乃射 … its last words)."""
    from soundscape.resources import bundled_dir
    from soundscape.sequence.archery import load_config
    from soundscape.sequence.settings import load_settings, round_specs
    from soundscape.sequence.shooting import find_shoots

    config = load_config(rite=rite_id)
    specs = (round_specs(config.data["round"], str(config.source)) if "round" in config.data
             else load_settings().rounds)
    bundled = {s.number for s in
               find_shoots(cuesheet.load(bundled_dir("cues") / f"{rite_id}.toml"), specs).values()}
    missing = bundled - {s.number for s in find_shoots(sheet, specs).values()}
    if missing:
        words = [f"round {spec.number} ("
                 + " … ".join(w for w in (spec.after, spec.at, spec.until) if w) + ")"
                 for spec in specs if spec.number in missing]
        click.echo(f"note: {source}: {len(bundled) - len(missing)} of the {len(bundled)} shooting "
                   f"rounds of {rites.rite(rite_id).title} were found; not found by their words: "
                   f"{', '.join(words)}: the missing rounds are sequenced without their archery",
                   err=True)


def _lacking(loaded: text.Text, rite_id: str) -> None:
    """Say which runs of its rite's own text the text does not hold, and where."""
    runs = lacking(loaded, rite_id)
    if not runs:
        return
    size = sum(len(words) for words, _ in runs)
    where = ", ".join(
        f"{len(words)} at line {loaded.line_of(min(at, len(loaded.chars) - 1))} "
        f"「{words[:8]}{'…' if len(words) > 8 else ''}」" for words, at in runs[:6])
    click.echo(f"note: {loaded.source}: lacks {counted(size, 'character')} of the bundled "
               f"{rites.rite(rite_id).title}'s 經文 in {counted(len(runs), 'run')} "
               f"({where}{' …' if len(runs) > 6 else ''}): a page the print lost, an "
               "omission or an excerpt's end; sequenced without them", err=True)


def _unmatched(loaded: text.Text, rite_id: str, drop: bool) -> text.Text:
    """Say where the text holds runs of words its rite's own text does not (commentary or a
    translation read as the rite, most often), so that the user can mark them; with
    ``drop`` (--drop-unmatched), set them aside and return the text without them."""
    kept, spans = only_the_rite(loaded, rite_id) if drop else (loaded, unmatched(loaded, rite_id))
    if not spans:
        return loaded
    size = sum(b - a for a, b in spans)
    where = ", ".join(f"line {loaded.line_of(a)} 「{loaded.chars[a:min(b, a + 8)]}"
                      f"{'…' if b - a > 8 else ''}」" for a, b in spans[:6])
    runs = (f"{counted(size, 'character')} in {counted(len(spans), 'run')} "
            f"{'that are' if drop else 'are'} not in the bundled {rites.rite(rite_id).title}'s "
            f"經文 ({where}{' …' if len(spans) > 6 else ''})")
    if drop:
        click.echo(f"note: {loaded.source}: set aside {runs} (--drop-unmatched)", err=True)
        return kept
    click.echo(f"note: {loaded.source}: {runs}: read as the rite's words. If they are "
               "commentary, a translation or the edition's own, mark them as docs/rites.md "
               "(Reading any edition) shows, or pass --drop-unmatched", err=True)
    return loaded


def set_aside_report(loaded: text.Text) -> list[str]:
    """One line per kind of aside (and for bracketed notes): what was not derived from."""
    lines = []
    for kind, label in _KINDS.items():
        found = [a for a in loaded.asides if a.kind == kind]
        if found:
            size = sum(a.end - a.start for a in found)
            where = ", ".join(str(a.line) for a in found[:8]) + (" …" if len(found) > 8 else "")
            lines.append(f"set aside {label}: {counted(len(found), 'passage')}, "
                         f"{counted(size, 'character')}, line{'s' if len(found) > 1 else ''} "
                         f"{where}; not derived from")
    for gap in loaded.gaps:
        lines.append(f"{loaded.source}: {gap.describe()} (the print lacks them); derived "
                     "the rest")
    if loaded.notes and not loaded.source.startswith("bundled:"):
        kept = counted(len(loaded.notes), "bracketed note")
        opened = {note.opener for note in loaded.notes}
        marks = ", ".join(f"{opener}…{closer}" for opener, closer
                          in commentary.rules()["notes"]["brackets"].items()
                          if opener in opened)
        lines.append(f"kept {kept} ({marks}) as notes; not derived from")
    return lines


@click.command("derive")
@click.argument("source", required=False, type=FilePath(path_type=Path))
@click.option("-o", "--out", "output",
              type=FilePath(dir_okay=False, allow_dash=True, path_type=Path), default=None,
              help="Cue sheet to write (default: cues/dashe.toml under the current folder "
                   "for the bundled text, else the text's name with .toml beside it); "
                   "- writes it to standard output.")
@click.option("--rite", "rite_id", default=None, metavar="ID",
              help="The bundled rite (see `soundscape rites`) the text is: its site, layout, "
                   "forces and rules are used. Without TEXT, derive that rite from its own "
                   "text into cues/ID.toml in the project folder; with TEXT, force it "
                   "(else derive recognises the rite by the text's content).")
@click.option("--chapter", default=None, metavar="N",
              help="For a TEXT that is a book of several chapters (鄉射禮第五, 燕禮第六 …): "
                   "the one to derive, by its number (5, 五), words of its title (鄉射) "
                   "or the line of its title (\"line 379\": a chapter printed twice). "
                   "Without it, --rite ID chooses the chapter recognised as that rite.")
@click.option("--drop-unmatched", is_flag=True,
              help="Set aside the runs of 12 characters or more that the bundled rite's own "
                   "text does not hold (commentary or a translation no mark sets apart), "
                   "reading only the rite's words. Without it derive names them.")
def command(source: Path | None, output: Path | None, rite_id: str | None,
            chapter: str | None, drop_unmatched: bool) -> None:
    """Derive a cue sheet (sections, steps, layout, music, voices) from TEXT.

    With no TEXT, derive it from the bundled 大射儀 經文 and write cues/dashe.toml
    in the project folder (a checkout, or a folder with a soundscape.toml; never the
    copy inside an installed package). Outside a project, the current folder becomes
    one (a soundscape.toml is written), so that `render` and the other verbs read the
    derived sheet. A TEXT that is a bundled rite in any edition is recognised by its
    content (title line, incipit, steps and music) and takes that rite's site, layout,
    forces and rules. A sheet that would not sequence is written, but derive says why
    and exits with an error.
    """
    recognised = part = ""
    _check_ending(output)
    if (chapter is not None or drop_unmatched) and source is None:
        raise click.UsageError("--chapter and --drop-unmatched read a TEXT: give the TEXT")
    if source is None and rite_id is not None:
        loaded, text_id = rites.load_rite_text(rite_id), rite_id
        title = rites.rite(rite_id).title
        target = output or _project_output().with_name(f"{rite_id}.toml")
    elif source is None:
        loaded, text_id, title = text.load_bundled(), "dashe", "大射儀"
        target = output or _project_output()
    else:
        loaded, text_id, title = text.load(source), source.stem, source.stem
        if loaded.encoding != "utf-8":
            click.echo(f"note: {loaded.source}: not UTF-8; read as {loaded.encoding}", err=True)
        loaded, chosen = chapter_of(loaded, chapter, rite_id)
        if chosen is not None:
            part = f", its chapter {chosen.title} (line {chosen.line})"
            click.echo(f"note: {loaded.source}: a book of chapters; derived the one at line "
                       f"{chosen.line}, {chosen.title}", err=True)
        target = output or source.with_suffix(".toml")
        rite_id, recognised = _which_rite(loaded, rite_id)
        if rite_id is not None:
            text_id, title = rite_id, rites.rite(rite_id).title
            loaded = _unmatched(loaded, rite_id, drop_unmatched)
            _lacking(loaded, rite_id)
        elif drop_unmatched:
            raise click.UsageError("--drop-unmatched sets aside what a bundled rite's own text "
                                   "does not hold: the text is none (pass --rite ID)")
    if source is not None and target.resolve() == source.resolve():
        raise CueSheetError(f"{target}: is the text itself; the sheet needs a name of its own "
                            "(-o FILE.toml)")
    for line in set_aside_report(loaded):
        click.echo(f"note: {line}", err=True)
    sheet = derive(loaded, text_id=text_id, title=title, rite=rite_id)
    _within_bounds(sheet, loaded.source)
    for piece, number, quote in unscored_music(loaded):
        click.echo(f"note: {loaded.source}:{number}: {quote} names piece {piece!r}, which has "
                   "no score in the repertoire: not cued", err=True)
    header = (f"Cue sheet derived by `soundscape derive` from {_shown(loaded.source)}{part}.\n"
              "Format: docs/cuesheet.md. Spans index the text's normalised characters."
              + (f"\n{recognised}" if recognised else ""))
    to_stdout = str(target) == "-"
    if to_stdout:
        written = cuesheet.file_text(sheet, header=header)
        click.echo(written, nl=False)
        target = Path("<standard output>")
        saved = cuesheet.loads(written, source=str(target))
    else:
        saved = cuesheet.load(cuesheet.save(sheet, target, header=header))
    click.echo(f"{target}: {len(sheet.sections)} sections, "
               f"{len(sheet.steps)} steps, {len(sheet.layout)} layout entries, "
               f"{len(sheet.music)} music cues, {len(sheet.voices)} voice cues, "
               f"{len(sheet.speech)} speech cues", err=to_stdout)
    ji = next((s for s in sheet.sections if s.part == "記"), None)
    if ji is not None:  # say where: a 記 read too early leaves the rite's end unperformed
        size = ji.span[1] - ji.span[0]
        click.echo(f"note: {loaded.source}:{loaded.line_of(ji.span[0])}: the 記 begins "
                   f"({size} of {len(loaded.chars)} characters, "
                   f"{100 * size / max(1, len(loaded.chars)):.0f} %): kept apart, never "
                   "performed; its music lines are variants (`soundscape rites`)", err=True)
    if not sheet.music:
        click.echo(f"note: no music found in {loaded.source}: none of the formulas "
                   "(奏X, 歌X, 管X, 笙入, 間歌, 合樂, 無算樂, 入驁) occurs; the sheet has "
                   "no music cues", err=True)
    if rite_id is not None:
        _shooting_found(sheet, rite_id, loaded.source)
    problems = unplayable(saved, target)
    if problems:
        advice = ("pass --rite ID if the text is one of the bundled rites "
                  f"({', '.join(rites.rite_ids())}; see `soundscape rites`), or add "
                  "[[layout]] entries for these performers (docs/cuesheet.md)")
        raise CueSheetError(
            f"{target} was written but will not sequence:\n  " + "\n  ".join(problems[:8])
            + (f"\n  … {len(problems) - 8} more" if len(problems) > 8 else "")
            + f"\n{advice}")


def _check_ending(output: Path | None) -> None:
    """Refuse, before deriving, an ``-o`` that names no cue sheet (``sheet.xyz`` was
    written, and no verb reads it as one)."""
    if output is not None and str(output) != "-" and output.suffix.lower() != ".toml":
        raise CueSheetError(f"-o {str(output)!r}: ending {output.suffix!r} is not a cue "
                            "sheet's; accepted: a .toml file, or - (standard output)")


def _within_bounds(sheet: cuesheet.CueSheet, source: str) -> None:
    """Refuse, before writing it, a sheet larger than a sheet may be (``cuesheet.MOST``): it
    would not load."""
    counts = {"section": sheet.sections, "step": sheet.steps, "layout": sheet.layout,
              "music": sheet.music, "voice": sheet.voices, "speech": sheet.speech}
    over = cuesheet.too_many({table: len(entries) for table, entries in counts.items()})
    if over is not None:
        table, most = over
        raise CueSheetError(f"{source}: derives {len(counts[table])} [[{table}]] entries, "
                            f"where a sheet holds at most {most}: give the text of one rite "
                            "(a chapter of the Yili), not a whole book; nothing written")


def _which_rite(loaded: text.Text, forced: str | None) -> tuple[str | None, str]:
    """The bundled rite of a user's text: ``forced`` (checked against the text's content,
    a mismatch noted), else the one recognised; say which and how sure. Returns the rite
    and the line the sheet's header keeps."""
    from soundscape.text.derive.recognise import recognise

    found = recognise(loaded)
    if forced is None:
        tail = ("; its site, layout, forces and rules are used (--rite ID chooses another)"
                if found.rite else "; derived with no rite's data (--rite ID forces one)")
        click.echo(f"note: {loaded.source}: {found.describe()}{tail}", err=True)
        return found.rite, f"By its content the text is {found.describe()}."
    rites.rite(forced)  # an unknown id is refused with the known ones
    if found.rite != forced:
        click.echo(f"note: {loaded.source}: --rite {forced} forced; by its content the text "
                   f"is {found.describe()}", err=True)
    return forced, f"Rite {forced} forced (--rite); by its content the text is {found.describe()}."


def unplayable(sheet: cuesheet.CueSheet, path: Path) -> list[str]:
    """Why ``sheet``, as loaded from ``path``, would not sequence (``FILE:LINE: …`` each),
    or []: every music cue's performer must be a layout entry placed on the rite's site,
    or the 工."""
    from soundscape.errors import SoundscapeError
    from soundscape.sequence.players import build_players
    from soundscape.site.courtyard import load_site, site_of

    try:
        site = load_site(rite=site_of(sheet.text.id, sheet.layout))
        players = build_players(sheet, site)
    except SoundscapeError as error:
        return [str(error)]
    missing: dict[str, list] = {}
    for cue in sheet.music:
        for who in cue.performers:
            if not players.plays(who):
                missing.setdefault(who, []).append(cue)
    return [f"{path}:{cues[0].line}: music {cues[0].piece!r}: performer {who!r} is neither a "
            f"layout id nor gong/se" + (f" (and {len(cues) - 1} more cues)" if len(cues) > 1
                                        else "") for who, cues in missing.items()]
