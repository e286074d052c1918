"""The docs say what the code is (issue 29, item 14): docs/architecture.md names every module
of every package and no other, lists every instrument file, and its calls resolve;
docs/render.md gives the note cache the code uses."""

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import soundscape

DOCS = Path(__file__).resolve().parents[1] / "docs"
ROOT = Path(soundscape.__file__).resolve().parent


def _house() -> dict[str, set[str]]:
    """Package ('' for the top) → the modules the house block of architecture.md names: the
    words outside parentheses on its line and the lines continuing it."""
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    block = text.split("## The house", 1)[1].split("```", 2)[1]
    entries: list[list[str]] = []  # [package, text of its line and continuations]
    for line in block.splitlines():
        if not line.startswith("  "):  # soundscape/, tests/
            continue
        head = re.match(r"  ([a-z_/]+/)\s", line)
        if head:
            entries.append([head[1].rstrip("/"), line[len(head[0]):]])
        elif line.startswith("    ") and entries:
            entries[-1][1] += " " + line
        else:
            entries.append(["", line])
    named: dict[str, set[str]] = {}
    for package, words in entries:
        while re.search(r"\([^()]*\)", words):  # notes in parentheses, nested ones too
            words = re.sub(r"\([^()]*\)", " ", words)
        named.setdefault(package, set()).update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", words))
    return named


def _packages() -> dict[str, set[str]]:
    """Package ('' for the top) → its modules (``__main__`` and the data folder's build
    scripts apart; a subpackage has its own line)."""
    found: dict[str, set[str]] = {}
    for init in ROOT.rglob("__init__.py"):
        folder = init.parent
        package = folder.relative_to(ROOT).as_posix().replace(".", "")
        if package.split("/")[0] == "data":
            continue
        found[package] = {m.name for m in pkgutil.iter_modules([str(folder)])
                          if not m.ispkg and m.name not in ("__init__", "__main__")}
    return found


def test_the_house_names_every_module_of_every_package_and_no_other():
    named, actual = _house(), _packages()
    assert set(named) == set(actual), "packages named in docs/architecture.md"
    for package, modules in actual.items():
        where = package or "the top"
        assert not modules - named[package], f"{where}: not named: {modules - named[package]}"
        assert not named[package] - modules, f"{where}: no such: {named[package] - modules}"


def test_the_instrument_ids_are_every_instrument_file():
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    paragraph = text.split("Instrument ids (", 1)[1].split("\n\n", 1)[0]
    listed = set(re.findall(r"`([a-z_]+)`", paragraph))
    files = {p.stem for p in (ROOT.parent / "instruments").glob("*.toml")}
    assert listed == files, (files - listed, listed - files)


def _modules_by_name() -> dict[str, list[str]]:
    names: dict[str, list[str]] = {}
    for info in pkgutil.walk_packages(soundscape.__path__, "soundscape."):
        if ".data." not in info.name:
            names.setdefault(info.name.rsplit(".", 1)[1], []).append(info.name)
    return names


def test_every_call_the_architecture_names_exists():
    """`module.function(` and `soundscape.package.module.name` in the text resolve."""
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    modules = _modules_by_name()
    calls = set(re.findall(r"`(?:soundscape\.)?((?:[a-z_]+\.)*[a-z_]+)\.([A-Za-z_]+)\(", text))
    assert len(calls) > 10
    for module, name in sorted(calls):
        found = [m for m in modules.get(module.rsplit(".", 1)[-1], []) if m.endswith(module)]
        assert any(hasattr(importlib.import_module(m), name) for m in found), (module, name)
    for dotted in set(re.findall(r"`(soundscape(?:\.[a-z_]+)+)", text)):
        head, _, tail = dotted.rpartition(".")
        try:
            importlib.import_module(dotted)
        except ModuleNotFoundError:
            assert hasattr(importlib.import_module(head), tail), dotted


def test_render_md_gives_the_note_cache_the_code_uses():
    from soundscape.sound.notes import CACHE_BYTES

    text = (DOCS / "render.md").read_text(encoding="utf-8")
    stated = re.search(r"`notes\.CACHE_BYTES` = (\d+) MiB", text)
    assert stated, "docs/render.md names notes.CACHE_BYTES"
    assert int(stated[1]) << 20 == CACHE_BYTES


@pytest.mark.parametrize("doc", ["architecture.md", "render.md"])
def test_no_doc_names_a_module_that_is_gone(doc):
    """`soundscape/x/y.py` and `sound/y.py`-style paths in the doc exist."""
    text = (DOCS / doc).read_text(encoding="utf-8")
    for path in set(re.findall(r"\b((?:soundscape/)?(?:[a-z_]+/)+[a-z_0-9]+\.py)\b", text)):
        relative = path.removeprefix("soundscape/")
        assert (ROOT / relative).exists() or (ROOT.parent / path).exists(), path
