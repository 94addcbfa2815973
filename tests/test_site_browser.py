"""The built site in a real browser: search with raw log lines, Chinese and synonyms, the status table,
copy-link buttons, the home page's filters.

The search cases come from each real entry's own data (its signature examples, the same lines with
other numbers, its Chinese title, its synonyms), so a new entry adds cases and never breaks one.
Needs playwright (the `test` extra) and a Chromium binary; no browser is downloaded. Without them
the tests skip, except under CI (env CI set), where a missing browser must not pass silently.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlparse

import pytest

from kb.entries import Entry, load_all

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ENTRIES = load_all(REPO)
BY_SLUG = {e.slug: e for e in ENTRIES}


def _matches(entry: Entry, line: str) -> bool:
    """Whether one of the entry's signatures would report this line: its own example, or its pattern."""
    return any(s.example == line or (s.kind == "log" and s.pattern and re.search(s.pattern, line))
               for s in entry.meta.signatures)


def _other_numbers(line: str) -> str:
    """The same line as another model prints it: every number changed."""
    return re.sub(r"\d+", lambda m: str(int(m.group(0)) * 2 + 7), line)


def _cases() -> list[tuple[str, str, str, frozenset[str]]]:
    """(slug, what, query, the entries that must be the top hits) from every entry's own data.
    A line several entries' signatures report (a generic message) must bring all of them first."""
    out = []
    for e in ENTRIES:
        for sig in e.meta.signatures:
            if not sig.example:
                continue
            for what, line in (("example", sig.example), ("other-numbers", _other_numbers(sig.example))):
                if what == "other-numbers" and (line == sig.example or not _matches(e, line)):
                    continue
                out.append((e.slug, what, line, frozenset(x.slug for x in ENTRIES if _matches(x, line))))
        if e.meta.zh:
            out.append((e.slug, "zh-title", e.meta.zh.title, frozenset({e.slug})))
        for word in e.meta.synonyms:  # a word two entries list must bring both first
            out.append((e.slug, "synonym", word, frozenset(
                x.slug for x in ENTRIES if word.casefold() in (w.casefold() for w in x.meta.synonyms))))
    return out


def _messages_index():
    from kb import messages

    return messages.load_all(REPO)


def _ops(e: Entry) -> set[str]:
    return {op for p in e.meta.trigger for n in p.nodes.values() for op in (n.ops() or ())}


# Queries people type, and how to recognise their entry by its data rather than by its slug.
FIXED = [
    ("deconvolution grouped batchnorm", lambda e: "ConvTranspose" in _ops(e) and "batchnorm" in e.meta.tags),
    ("反卷积", lambda e: "ConvTranspose" in _ops(e)),
    ("层归一化 NaN", lambda e: "onnx2ncnn" in e.meta.engines and "layernorm" in e.meta.tags),
    ("量化 GRU 段错误", lambda e: "quantization" in e.meta.tags and "gru" in e.meta.tags),
]
CASES = _cases()
GENERIC = {m.id for m in _messages_index().values() if m.generic}
RESULTS = ".md-search-result__list > li"


def _id(case) -> str:
    s, w, q, _ = case.values if hasattr(case, "values") else case
    return f"{s}:{w}:{q[:40]}"
ZH_PROBE = "量化"  # a Chinese word several entries use


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
def records(tmp_path_factory):
    """A snapshot of the record store: the corpus checks running beside these tests append to the real
    one (a new day, a new verdict), and the site and the tests' own derivation must read the same records."""
    from kb.paths import state

    snap = tmp_path_factory.mktemp("records")
    src = state("records")
    if src.is_dir():
        for f in src.glob("*.jsonl"):
            shutil.copy(f, snap / f.name)
    return snap


@pytest.fixture(scope="module")
def base_url(tmp_path_factory, records):
    """The site of this checkout (entries and records as they are), served on a free local port."""
    tmp = tmp_path_factory.mktemp("browser-site")
    site = tmp / "site"
    # Built in a fresh Python: the search index's Chinese words come from jieba's global state, which
    # other tests in this process may have changed.
    code = ("import sys; from pathlib import Path; from kb.site import build_site; "
            "build_site(Path(sys.argv[1]), docs_dir=Path(sys.argv[2]), strict=True)")
    p = subprocess.run([sys.executable, "-c", code, str(site), str(tmp / "docs")], capture_output=True, text=True,
                       env={**os.environ, "KB_RECORDS": str(records)})
    assert p.returncode == 0, p.stderr[-2000:]

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
    # The search worker loads its Chinese segmenter after the index; until then a Chinese query finds
    # nothing. Wait for one to work before the cases run (on a loaded machine that takes a while).
    box = page.locator("input.md-search__input")
    box.fill(ZH_PROBE)
    box.press("End")
    page.wait_for_function(f"document.querySelectorAll('{RESULTS}').length > 0", timeout=120_000)
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


def _entries(hits: list[str], *, entries_only: bool = False) -> list[str]:
    """The hits as paths (slugs for entry pages), best first; only entry pages, if asked."""
    paths = [urlparse(h).path.strip("/") for h in hits]
    return [p for p in paths if p in BY_SLUG] if entries_only else paths


SLACK = 3  # places a page may lose to pages that share its words ("layer X not exists or registered")


@pytest.mark.parametrize("slug,what,query,want", CASES, ids=[_id(c) for c in CASES])
def test_an_entrys_own_words_find_it(search_page, slug, what, query, want):
    hits = search(search_page, query)
    # A log line may also find the page of its engine message (kb.site.messages), which lists every
    # cause; every entry whose signatures report the line appears near the top, all of them (a generic
    # message is shared: none has to be first). A Chinese title or a synonym finds its entry near the top.
    # The entry the words come from is among the first hits; an entry that shares a generic message
    # is found too (tests/test_corpus.py checks that with kb explain), wherever the search ranks it.
    window = 1 + SLACK + (len(want) - 1 if what == "synonym" else 0)  # a shared word has to share the top
    if what == "example":  # every entry whose signature reports the line, or cites its generic message, is a
        # candidate as good as this one
        generic = {s.message for s in BY_SLUG[slug].meta.signatures if s.message in GENERIC}
        window += len({e.slug for e in ENTRIES for s in e.meta.signatures
                       if (s.kind == "log" and s.regex().search(query)) or s.message in generic}) - 1
    top = _entries(hits, entries_only=what in ("example", "other-numbers"))[:window]
    # A generic message's line has many causes: its message page, which lists them all, is the right place.
    pages = {f"messages/{s.message}" for s in BY_SLUG[slug].meta.signatures
             if what in ("example", "other-numbers") and s.example and s.message in GENERIC and
             re.search(s.pattern or "$^", query)}
    assert slug in top or pages & set(_entries(hits)[:1 + SLACK]), f"{what} {query!r}: want {slug} among {top}"


@pytest.mark.parametrize("query,is_it", FIXED, ids=[q for q, _ in FIXED])
def test_what_people_type_finds_the_entry(search_page, query, is_it):
    slugs = {e.slug for e in ENTRIES if is_it(e)}  # the entries of the corpus that are that problem
    assert slugs, f"{query!r}: no entry of the corpus is that problem any more"
    hits = search(search_page, query)
    top = _entries(hits)[:1 + SLACK]
    assert slugs & set(top), f"{query!r}: want one of {sorted(slugs)} among {top}"


def test_status_table_shows_the_recorded_verdicts(context, base_url, records):
    from kb.site.generate import render
    from kb.site.timeline import sentence

    statuses = render(records=records).statuses  # the same derivation the build used, from the same records
    slug = max(statuses, key=lambda s: (len(statuses[s].engines), s))  # the entry on the most engines
    want = statuses[slug]
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
    slug = ENTRIES[0].slug
    page = context.new_page()
    page.goto(base_url + f"{slug}/?h=ignored")
    for anchor in ("status", "symptom", "cause", "workaround"):
        button = page.locator(f"h2#{anchor} .kb-copy-link")
        button.click()
        want = f"{base_url}{slug}/#{anchor}"
        page.wait_for_function("(want) => window.__kbCopied === want", arg=want, timeout=5_000)
        # the button marks itself once the clipboard's promise resolves, a moment after the write
        page.wait_for_function("([sel, want]) => document.querySelector(sel).getAttribute('data-copied') === want",
                               arg=[f"h2#{anchor} .kb-copy-link", want], timeout=5_000)
        assert page.evaluate("navigator.clipboard.readText()") == want
    page.close()


def test_home_page_filters_by_engine_tag_and_status(context, base_url):
    from kb.site.generate import render
    from kb.site.pages import engine_status

    statuses = render().statuses
    per_engine = {slug: {es.engine: engine_status(es) for es in st.engines} for slug, st in statuses.items()}
    page = context.new_page()
    page.goto(base_url)
    rows = page.locator(".kb-entries tbody tr")
    assert rows.count() == len(ENTRIES)

    def visible() -> set[str]:
        return {rows.nth(i).get_attribute("data-slug") for i in range(rows.count()) if rows.nth(i).is_visible()}

    # An entry on several engines shows each engine's status.
    for slug, engines in per_engine.items():
        if len(engines) > 1:
            shown = page.locator(f'tr[data-slug="{slug}"] .kb-engine-status')
            assert {shown.nth(i).get_attribute("data-engine"): shown.nth(i).get_attribute("data-status")
                    for i in range(shown.count())} == engines
    engines = sorted({x for e in ENTRIES for x in e.meta.engines})
    engine = min(engines, key=lambda x: sum(x in e.meta.engines for e in ENTRIES))  # the rarest: a real filter
    page.select_option("#kb-filter-engine", engine)
    assert visible() == {e.slug for e in ENTRIES if engine in e.meta.engines}
    page.select_option("#kb-filter-engine", "")
    tags = [t for e in ENTRIES for t in e.meta.tags]
    tag = max(sorted(set(tags)), key=tags.count)
    page.select_option("#kb-filter-tag", tag)
    assert visible() == {e.slug for e in ENTRIES if tag in e.meta.tags}
    assert f"tag={tag}" in page.url  # the filter can be shared as a link
    page.select_option("#kb-filter-tag", "")
    for status in {s for st in per_engine.values() for s in st.values()} | {st.status for st in statuses.values()}:
        page.select_option("#kb-filter-status", status)
        assert visible() == {s for s, st in statuses.items() if st.status == status or status in
                             per_engine[s].values()}, status
    page.select_option("#kb-filter-status", "")
    e = next(e for e in ENTRIES if e.meta.tags)
    page.goto(base_url + f"?engine={e.meta.engines[0]}&tag={e.meta.tags[0]}")
    assert visible() == {x.slug for x in ENTRIES if e.meta.engines[0] in x.meta.engines and e.meta.tags[0] in
                         x.meta.tags}
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "site-home.png"))
    page.close()


@pytest.mark.parametrize("width,height", [(1280, 800), (390, 844)])
def test_the_first_screen_shows_the_newest_status_and_the_workaround(context, base_url, width, height):
    slug = next(e.slug for e in ENTRIES if e.meta.workarounds and "mnn" in e.meta.engines)
    page = context.new_page()
    page.set_viewport_size({"width": width, "height": height})
    page.goto(base_url + f"{slug}/")
    for part in (".kb-answer-engine", ".kb-answer-fix"):
        box = page.locator(part).first.bounding_box()
        assert box and box["y"] + box["height"] <= height, f"{part} ends at {box} on a {width}x{height} screen"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"first-screen-{width}.png"))
    page.close()


def test_the_home_tables_status_column_is_visible_on_a_phone(context, base_url):
    page = context.new_page()
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(base_url)
    badge = page.locator("tr.kb-entry .kb-badge").first
    box = badge.bounding_box()
    assert badge.is_visible() and box and box["x"] + box["width"] <= 390, f"status badge at {box} on a 390 px screen"
    page.close()
