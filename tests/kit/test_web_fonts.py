"""The kit page on a machine without a CJK font (Chromium under a fontconfig that knows
only DejaVu): the page's own font subset draws every Chinese character it shows, and the
plan shows the court's outline with its places named in Chinese and English."""

from __future__ import annotations

import pytest

from tests.kit.browser import needs_chromium, needs_latin_only, open_kit
from tests.kit.test_build import build

pytestmark = [needs_chromium, needs_latin_only]

#: Per element that shows Chinese (form controls and SVG text included), draws each of its
#: characters on a canvas in the element's own computed font and returns those that come
#: out as the box of a missing glyph: the same pixels as a character no font here has.
_TOFU = """(extra) => {
  const size = 40, canvas = document.createElement('canvas');
  canvas.width = canvas.height = size;
  const ctx = canvas.getContext('2d', {willReadFrequently: true});
  const draw = (c, family) => {
    ctx.clearRect(0, 0, size, size); ctx.font = `32px ${family}`; ctx.fillText(c, 2, 34);
    return ctx.getImageData(0, 0, size, size).data.join(',');
  };
  const han = (text) => [...new Set([...text].filter((c) => c.codePointAt(0) >= 0x2E80))];
  const shown = [];
  for (const node of document.querySelectorAll('body *')) {
    const own = [...node.childNodes].filter((n) => n.nodeType === 3).map((n) => n.data).join('');
    const text = node.tagName === 'SELECT' ? [...node.options].map((o) => o.text).join('') : own;
    if (han(text).length) shown.push([getComputedStyle(node).fontFamily, han(text)]);
  }
  if (extra) shown.push([getComputedStyle(document.body).fontFamily, extra]);
  const missing = new Set();
  for (const [family, chars] of shown) {
    const box = draw('\\u9FA5', family);
    for (const c of chars) if (draw(c, family) === box) missing.add(c);
  }
  return {checked: shown.reduce((n, [, chars]) => n + chars.length, 0), missing: [...missing]};
}"""


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    root = tmp_path_factory.mktemp("fonts")
    kit = build(root, layouts=("stereo",), programme_ids=("all",)).parent
    with open_kit(kit, root, latin_only=True) as tab:
        tab.evaluate("document.fonts.ready")
        tab.wait_for_function("document.fonts.check('16px \"Soundscape CJK\"', '堂')")
        yield tab


def test_every_chinese_character_on_the_page_is_drawn_without_a_cjk_font(page):
    found = page.evaluate(_TOFU, None)
    assert found["checked"] > 30  # titles, menus, the passage, places, the legend, timeline
    assert found["missing"] == []
    # the check can fail: characters the subset lacks come out as boxes here
    assert sorted(page.evaluate(_TOFU, ["齉", "鬱"])["missing"]) == sorted(["齉", "鬱"])


def test_the_plan_shows_the_court_and_names_its_places_in_chinese_and_english(page):
    outline = page.evaluate("""() => ({
        walls: document.querySelectorAll('#plan .outline polyline.wall').length,
        hall: document.querySelectorAll('#plan .outline rect.hall').length,
        stairs: document.querySelectorAll('#plan .outline rect.stair').length,
        targets: [...document.querySelectorAll('#plan .target-name')].map((t) => t.textContent),
        places: [...document.querySelectorAll('#plan text.place')].map((t) => t.textContent),
        legend: document.querySelectorAll('#legend li').length})""")
    assert outline["walls"] == 1 and outline["hall"] == 1 and outline["stairs"] >= 2
    assert any(t.startswith("大侯 ") for t in outline["targets"])
    assert "阼階 eastern stairs" in outline["places"] or any(
        p.startswith("阼階 ") and len(p) > 4 for p in outline["places"])
    assert outline["legend"] >= 6
