"""The built site in a real browser: search with raw log lines, the status table, copy-link buttons.

Needs playwright (the `test` extra) and a Chromium binary; no browser is downloaded. Without them
the tests skip, except under CI (env CI set), where a missing browser must not pass silently.
"""

from __future__ import annotations

import functools
import os
import shutil
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlparse

import pytest

from kb.entries import load_all

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ENTRIES = load_all(REPO)
# Every signature example, plus fragments a user is likely to paste instead of the whole line.
QUERIES = [(e.slug, s.example) for e in ENTRIES for s in e.meta.signatures if s.example] + [
    ("mnn-groupnorm-unregistered-custom-op", "Broad cast error, dim1 = 256, dim2 = 128"),
    ("mnn-groupnorm-unregistered-custom-op", "These Op Not Support: ONNX::FeatureConversion"),
    ("mnn-qdq-input-permutation", "inputChannel: 1, batch:3"),
    ("ncnn-onnx2ncnn-layernorm", "layer LayerNormalization not exists or registered"),
    ("mnn-multi-input-gru-quantization", "Can't find input extraTensorDescribe"),
    # The same lines from other models: other numbers, op and tensor names.
    ("mnn-groupnorm-unregistered-custom-op", "Broad cast error, dim1 = 512, dim2 = 64"),
    ("mnn-groupnorm-unregistered-custom-op", "These Op Not Support: ONNX::MyFancyOp"),
    ("mnn-qdq-input-permutation", "inputChannel: 1, batch:8, width:224, height:224."),
    ("mnn-multi-input-gru-quantization", "Can't find input extraTensorDescribe for /model/lstm/Tanh_output_0"),
]
RESULTS = ".md-search-result__list > li"


def unavailable(reason: str):
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set, so this is a failure, not a skip)", pytrace=False)
    pytest.skip(reason)


def chromium_path() -> str | None:
    for candidate in (os.environ.get("KB_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                      shutil.which("chromium-browser")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("playwright is not installed (pip install -e '.[test]')")
    exe = chromium_path()
    if exe is None:
        unavailable("no Chromium found (apt-get install chromium, or set KB_CHROMIUM)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def base_url(tmp_path_factory):
    """The site of this checkout (entries and records as they are), served on a free local port."""
    from kb.site import build_site

    tmp = tmp_path_factory.mktemp("browser-site")
    site = build_site(tmp / "site", docs_dir=tmp / "docs", strict=True)

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    thread.join()


@pytest.fixture(scope="module")
def context(browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900},
                              permissions=["clipboard-read", "clipboard-write"])
    # Note every write to the clipboard too, so the check does not depend on reading it back.
    ctx.add_init_script("""
        if (navigator.clipboard) {
          const write = navigator.clipboard.writeText.bind(navigator.clipboard);
          navigator.clipboard.writeText = (text) => { window.__kbCopied = text; return write(text); };
        }""")
    yield ctx
    ctx.close()


@pytest.fixture(scope="module")
def search_page(context, base_url):
    page = context.new_page()
    page.goto(base_url)
    page.locator("input.md-search__input").click()
    yield page
    page.close()


def search(page, query: str) -> list[str]:
    """Type `query` into the search box; the addresses of the result groups, best first."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    box = page.locator("input.md-search__input")
    box.fill("")
    box.press("End")  # material reads the box on keyup
    page.wait_for_function(f"document.querySelectorAll('{RESULTS}').length === 0")
    box.fill(query)
    box.press("End")
    try:
        page.wait_for_function(f"document.querySelectorAll('{RESULTS}').length > 0", timeout=10_000)
    except PlaywrightTimeout:
        meta = page.locator(".md-search-result__meta").inner_text()
        pytest.fail(f"no search result for {query!r} ({meta})", pytrace=False)
    groups = page.locator(RESULTS)
    return [groups.nth(i).locator("a").first.get_attribute("href") for i in range(groups.count())]


@pytest.mark.parametrize("slug,query", QUERIES, ids=[f"{s}:{q[:40]}" for s, q in QUERIES])
def test_a_pasted_log_line_finds_its_entry_first(search_page, slug, query):
    hits = [urlparse(h).path for h in search(search_page, query)]
    assert hits[0] == f"/{slug}/", f"{query!r}: top hits {hits[:3]}"


def test_status_table_shows_the_recorded_verdicts(context, base_url):
    from kb.site.generate import render
    from kb.site.timeline import sentence

    slug = "mnn-qdq-input-permutation"
    want = render().statuses[slug]  # the same derivation the build used, from the same records
    page = context.new_page()
    page.goto(base_url + f"{slug}/")
    assert page.locator(".kb-headline .kb-badge").inner_text().strip().lower() == want.label
    for es in want.engines:
        table = page.locator(f'.kb-status-table[data-engine="{es.engine}"]')
        assert table.is_visible()
        heads = table.locator("thead th.kb-version")
        assert [heads.nth(i).get_attribute("data-version") for i in range(heads.count())] == es.versions
        for cs in es.checks:
            row = table.locator(f'tr[data-check="{cs.check.name}"]')
            assert row.locator("td.kb-history").inner_text().strip() == sentence(cs.timeline)
            for v, cell in cs.cells.items():
                td = row.locator(f'td[data-version="{v}"]')
                assert td.get_attribute("data-verdict") == cell.verdict
                # The cell shows the verdict and signature only; the rest is in its tooltip.
                assert td.inner_text().split() == [cell.verdict, *([cell.signature] if cell.signature else []),
                                                   *(["changed"] if cell.changed else [])]
                tip = td.get_attribute("title")
                assert cell.observed in tip and cell.platform in tip and cell.detail.split()[0] in tip
        dates = sorted({c.observed for cs in es.checks for c in cs.cells.values()})
        if dates:
            assert dates[0] in table.locator(".kb-observed").inner_text()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "site-entry.png"))
    page.locator("#trigger").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "site-entry-trigger.png"))
    page.close()


def test_many_versions_scroll_sideways_under_a_fixed_check_column(context, base_url):
    from kb.site.generate import render

    slug, (es, *_) = next((s, st.engines) for s, st in render().statuses.items()
                          if st.engines and len(st.engines[0].versions) > 6)
    page = context.new_page()
    page.set_viewport_size({"width": 720, "height": 900})  # a tablet: too narrow for every version
    page.goto(base_url + f"{slug}/")
    scroll = page.locator(f'.kb-status-table[data-engine="{es.engine}"] .kb-scroll')
    scroll.scroll_into_view_if_needed()
    assert scroll.evaluate("el => el.scrollWidth > el.clientWidth")  # it scrolls instead of squeezing
    names = scroll.locator("th.kb-check > code")
    for i in range(names.count()):  # every check name on one line
        assert names.nth(i).evaluate("el => el.getClientRects().length") == 1, names.nth(i).inner_text()
    name = scroll.locator(f'tr[data-check="{es.checks[0].check.name}"] th.kb-check')
    before = name.bounding_box()
    scroll.evaluate("el => { el.scrollLeft = el.scrollWidth; }")
    after = name.bounding_box()
    assert (after["x"], after["width"]) == (before["x"], before["width"])  # the check column stays put
    newest = scroll.locator(f'thead th[data-version="{es.versions[-1]}"]').bounding_box()
    box = scroll.bounding_box()
    assert newest["x"] + newest["width"] <= box["x"] + box["width"] + 1  # the newest version came into view
    ARTIFACTS.mkdir(exist_ok=True)
    scroll.screenshot(path=str(ARTIFACTS / "site-status-scrolled.png"))
    page.close()


def test_copy_link_button_copies_the_section_address(context, base_url):
    slug = "ncnn-onnx2ncnn-layernorm"
    page = context.new_page()
    page.goto(base_url + f"{slug}/?h=ignored")
    for anchor in ("status", "symptom", "cause", "workaround"):
        button = page.locator(f"h2#{anchor} .kb-copy-link")
        button.click()
        want = f"{base_url}{slug}/#{anchor}"
        page.wait_for_function("(want) => window.__kbCopied === want", arg=want, timeout=5_000)
        assert button.get_attribute("data-copied") == want
        assert page.evaluate("navigator.clipboard.readText()") == want
    page.close()


def test_home_page_filters_by_engine_and_tag(context, base_url):
    page = context.new_page()
    page.goto(base_url)
    rows = page.locator(".kb-entries tbody tr")
    assert rows.count() == len(ENTRIES)

    def visible() -> set[str]:
        return {rows.nth(i).get_attribute("data-slug") for i in range(rows.count()) if rows.nth(i).is_visible()}

    page.select_option("#kb-filter-engine", "ncnn")
    assert visible() == {e.slug for e in ENTRIES if "ncnn" in e.meta.engines}
    page.select_option("#kb-filter-engine", "")
    page.select_option("#kb-filter-tag", "quantization")
    assert visible() == {e.slug for e in ENTRIES if "quantization" in e.meta.tags}
    assert "tag=quantization" in page.url  # the filter can be shared as a link
    page.goto(base_url + "?engine=mnn&tag=qdq")
    assert visible() == {e.slug for e in ENTRIES if "mnn" in e.meta.engines and "qdq" in e.meta.tags}
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "site-home.png"))
    page.close()
