"""The site a verb uses follows the rite: --rite, a cue sheet's [text] id, or the rite a
saved Performance was sequenced from (render --performance of 鄉射 is heard in the 序)."""

from soundscape.cli._common import Sequencing
from soundscape.resources import bundled_dir
from soundscape.sequence.planner import perform_from_file


def test_a_saved_performance_brings_its_rites_site(tmp_path):
    first = perform_from_file(bundled_dir("cues") / "xiangshe.toml", seed=0, to_section="s03")
    saved = first.save_json(tmp_path / "xiangshe.json")
    options = Sequencing(None, None, 0, None, None, None, None, saved)
    assert options.site_rite(None) == "xiangshe"
    assert options.site(None).places.keys() != Sequencing(
        None, None, 0, None, None, None, None, None).site(None).places.keys()
    assert Sequencing(None, None, 0, None, None, None, None, None).site_rite(None) is None
