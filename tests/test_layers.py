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
