"""The bundled rite, sequenced once for every sequencer test (seed 7)."""

import pytest

from soundscape import cuesheet
from soundscape.music.tuning import default_tuning
from soundscape.sequence.planner import perform
from soundscape.site.courtyard import load_site


@pytest.fixture(scope="session")
def sheet():
    return cuesheet.load(cuesheet.bundled_path())


@pytest.fixture(scope="session")
def site():
    return load_site()


@pytest.fixture(scope="session")
def rite(sheet, site):
    return perform(sheet, site=site, tuning=default_tuning(), seed=7)
