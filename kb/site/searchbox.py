"""The built site in Chromium, as a person uses it: for the browser tests and the search bench, which must
build, serve and type alike (playwright is a test dependency, imported only here, on use).

    snapshot(records)            a copy of the record store, for a build and its readers to read the same
    build(site, docs, records)   the site of a checkout, built in a fresh Python
    served(site)                 a local address serving it, for a `with` block
    chromium_path()              a Chromium to drive, or None
    search(page, query)          type a query, commit it with a key release; the result groups' addresses
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

BOX = "input.md-search__input"
RESULTS = ".md-search-result__list > li"
POLL = 5  # ms between looks for the results: a frame (16 ms, playwright's default) is a fifth of a query
ZH_PROBE = "量化"  # a Chinese word several entries use: the worker's segmenter is loaded once it finds pages
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def snapshot(records: Path) -> Path:
    """Copy the record store into the new folder `records`: checks running meanwhile append to the store, and the
    site and whoever compares with it must read the same records."""
    from kb.paths import state

    records.mkdir(parents=True)
    src = state("records")
    for f in src.glob("*.jsonl") if src.is_dir() else ():
        shutil.copy(f, records / f.name)
    return records


def build(site: Path, docs: Path, records: Path, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Build in a fresh Python (in `cwd`, the checkout): the search index's Chinese words come from jieba's
    global state, which the caller's process may have changed."""
    code = ("import sys; from pathlib import Path; from kb.site import build_site; "
            "build_site(Path(sys.argv[1]), docs_dir=Path(sys.argv[2]), strict=True)")
    return subprocess.run([sys.executable, "-c", code, str(site), str(docs)], capture_output=True, text=True,
                          env={**os.environ, "KB_RECORDS": str(records)}, cwd=cwd)


@contextlib.contextmanager
def served(site: Path):
    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        thread.join()


def chromium_path() -> str | None:
    for candidate in (os.environ.get("KB_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                      shutil.which("chromium-browser")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def search(page, query: str, timeout: int = 10_000) -> list[str]:
    """Type `query` into the box; the result groups' addresses, best first ([] if none came)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.bring_to_front()  # Chromium slows a page behind another (one the tests opened later): 7 times per query
    box = page.locator(BOX)
    came = f"document.querySelectorAll('{RESULTS}').length > 0 && !document.querySelector('{RESULTS}[data-kb-seen]')"
    try:
        # The groups on screen are marked; the query's own replace them. (Clearing the box first, to see them go,
        # took a third of each query.) A query equal to the one before need not bring new groups: that one, and any
        # whose groups do not come soon, is typed again after a clear.
        same = page.evaluate(f"""q => {{ document.querySelectorAll('{RESULTS}').forEach(g => g.dataset.kbSeen = '1');
                                         return document.querySelector('{BOX}').value === q; }}""", query)
        if same:
            raise PlaywrightTimeout("the same query again")
        box.fill(query)
        # material reads the box on keyup; the key goes to the box fill focused (a locator's press would check the
        # box again: a fifth of a query's time)
        page.keyboard.press("End")
        page.wait_for_function(came, timeout=min(timeout, 2_000), polling=POLL)
    except PlaywrightTimeout:
        box.fill("")
        box.press("End")
        page.wait_for_function(f"document.querySelectorAll('{RESULTS}').length === 0")
        box.fill(query)
        box.press("End")
        try:
            page.wait_for_function(f"document.querySelectorAll('{RESULTS}').length > 0", timeout=timeout)
        except PlaywrightTimeout:
            return []
    # one round trip for all groups (a locator per group costs one each: most of a query's time)
    return page.evaluate(f"""Array.from(document.querySelectorAll('{RESULTS}'),
                                        g => g.querySelector('a') && g.querySelector('a').getAttribute('href'))""")
