"""The kit page served on localhost and opened in Debian's chromium (driven by Playwright),
shared by the browser tests. Every wait is bounded: a page that never answers fails its
test within a minute instead of stalling the run."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
#: fonts-dejavu-core: a fontconfig that knows only these has no CJK font
LATIN_ONLY = Path("/usr/share/fonts/truetype/dejavu")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
#: how long any one step of the page (a wait, a click, a script's promise) may take
STEP_MS = 60_000

needs_chromium = pytest.mark.skipif(shutil.which(CHROMIUM) is None,
                                    reason="Debian's chromium is not installed")
needs_latin_only = pytest.mark.skipif(not LATIN_ONLY.is_dir(),
                                      reason="fonts-dejavu-core is not installed")


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def _latin_only_fonts(root: Path) -> dict[str, str]:
    conf = root / "fonts.conf"
    conf.write_text(f"""<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig><dir>{LATIN_ONLY}</dir><cachedir>{root / 'fc-cache'}</cachedir></fontconfig>
""", encoding="utf-8")
    return {**os.environ, "FONTCONFIG_FILE": str(conf), "HOME": str(root)}


@contextlib.contextmanager
def open_kit(kit: Path, root: Path, *, latin_only: bool = False, args: tuple[str, ...] = (),
             ready: str = "window.kit && window.kit.last !== null") -> Iterator:
    """The kit folder's index.html in a fresh headless chromium, once `ready` holds; on
    leaving, asserts that the page fetched nothing from outside localhost."""
    sync_api = pytest.importorskip("playwright.sync_api")
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=kit))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    options = {"env": _latin_only_fonts(root),
               "viewport": {"width": 1400, "height": 900}} if latin_only else {}
    try:
        with sync_api.sync_playwright() as driver, tempfile.TemporaryDirectory() as profile:
            context = driver.chromium.launch_persistent_context(
                profile, executable_path=CHROMIUM, headless=True, args=[*ARGS, *args],
                timeout=STEP_MS, **options)
            context.set_default_timeout(STEP_MS)
            try:
                tab = context.new_page()
                outside: list[str] = []
                tab.on("request", lambda r: None if r.url.startswith(
                    (base, "blob:", "data:")) else outside.append(r.url))
                tab.goto(base + "index.html")
                tab.wait_for_function(ready)
                yield tab
                assert outside == []  # nothing fetched from outside
            finally:
                context.close()
    finally:
        server.shutdown()
        server.server_close()


def settle(page, script: str, arg=None, *, ms: int = STEP_MS):
    """`page.evaluate` of a script whose value is a promise, failed if it has not settled
    within `ms` (Playwright bounds its waits, not a script's promise)."""
    return page.evaluate("""([script, arg, ms]) => Promise.race([
        (0, eval)(script)(arg),
        new Promise((_, fail) => setTimeout(() => {
            const listen = window.kit && window.kit.listen;
            const where = listen && listen.pending ? ` (stage ${listen.stage}; fetching or`
                + ` decoding: ${listen.pending().join(', ') || 'nothing'})` : '';
            fail(new Error(`not settled within ${ms} ms: ${script}${where}`)); }, ms))])""",
                         [script, arg, ms])
