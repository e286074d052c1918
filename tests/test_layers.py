"""The layers hold at run time too: sequencing loads no sound code (and so no scipy.signal)."""

import subprocess
import sys
import textwrap


def test_sequencing_a_part_of_the_rite_loads_no_sound_code():
    script = textwrap.dedent("""
        import sys
        from soundscape.sequence.planner import perform_from_file
        perform_from_file(seed=0, from_section="s18", to_section="s18")
        loaded = [m for m in sys.modules if m.startswith("soundscape.sound") or
                  m == "scipy.signal"]
        print(",".join(loaded))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True, timeout=300)
    assert done.stdout.strip() == ""


def test_loading_every_instrument_loads_no_sound_code():
    """An instrument file is checked against its model's schema held as data: the model
    lookup lives in ``soundscape.sound.synth`` (no importlib into the sound layer from
    ``music``, which the import-linter cannot see)."""
    script = textwrap.dedent("""
        import sys
        from soundscape.music.instruments import list_instruments, load_instrument
        for name in list_instruments():
            load_instrument(name)
        print(",".join(m for m in sys.modules if m.startswith("soundscape.sound")))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True, timeout=300)
    assert done.stdout.strip() == ""


def test_the_lower_layers_name_no_sound_module_to_import():
    from pathlib import Path

    import soundscape

    root = Path(soundscape.__file__).parent
    for layer in ("text", "music", "site", "sequence"):
        for path in (root / layer).rglob("*.py"):
            code = path.read_text(encoding="utf-8")
            assert "import_module(" not in code and "find_spec(" not in code, path
