"""English glosses of steps and sections (soundscape.text.gloss, data/glosses.toml)."""

from __future__ import annotations

import pytest

from soundscape import cuesheet
from soundscape.text import gloss, glossary


@pytest.mark.parametrize(("actor", "action", "place", "quote", "said"), [
    ("司射", "再拜", "xijie", "司射再拜", "The director of archery (司射) bows twice, "
     "at the west steps"),
    ("三耦", "揖", "", "三耦皆揖", "The three couples (三耦) salute"),
    ("射人", "other", "", "射人戒", "The archery officer (射人) gives notice"),
    ("樂人", "other", "zuojie", "樂人宿縣於阼階東", "The music officers (樂人) hang the "
     "instruments, at the east steps"),
    ("卿", "other", "", "卿", "The ministers (卿) take part, as the passage says"),
    ("", "other", "", "厥明", "The passage sets the scene"),
    ("", "射", "", "君有命戒射", "They take part in the shooting"),
    ("某人", "拜", "nowhere", "某人拜", "某人 bows"),  # a term the tables lack stays Chinese
])
def test_step_sentences(actor, action, place, quote, said):
    assert gloss.load().step(actor, action, place, quote) == said


def test_the_bundled_rite_is_glossed_throughout():
    english = gloss.load()
    sheet = cuesheet.load(cuesheet.bundled_path())
    assert {s.actor for s in sheet.steps if s.actor} <= set(english.actors)
    assert {s.action for s in sheet.steps} - {"other"} <= set(english.actions)
    assert {s.place for s in sheet.steps if s.place} <= set(english.places)
    assert all(english.section(s.name) != s.name for s in sheet.sections)
    for step in sheet.steps:
        sentence = english.step(step.actor, step.action, step.place, step.quote)
        assert sentence[0].isupper() and "…" not in sentence and not sentence.endswith("other")


def test_every_action_and_place_of_the_glossary_has_english():
    terms = glossary.load()
    english = gloss.load()
    actions = {terms.name("action", a) for a in terms.ids("action")} - {"other"}
    assert actions <= set(english.actions)
    assert set(terms.ids("place")) <= set(english.places)
