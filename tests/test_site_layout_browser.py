"""The first screen, measured in a real browser at a laptop's 1280x800 and a phone's 390x844: an entry
page shows, without scrolling, the newest release's status and the verified workaround (with its link);
the Chinese summary is a jump away; the status table lists the newest release first, fits a phone
without a sideways scroll, and shows public labels with a legend; the home table's Status column is in
view on a phone.

Element positions come from the browser's layout (bounding boxes), the expected values from the same
derivation the build uses. The site and browser fixtures are tests/test_site_browser.py's, the records and statuses conftest.py's.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from kb.versions import version_key


def _site_browser():
    """tests/test_site_browser.py, for its fixtures (pytest runs with --import-mode=importlib: no sibling imports)."""
    name = "_kb_tests_site_browser"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("test_site_browser.py"))
        sys.modules[name] = module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return sys.modules[name]


_sb = _site_browser()
ARTIFACTS, BY_SLUG, ENTRIES = _sb.ARTIFACTS, _sb.BY_SLUG, _sb.ENTRIES
browser, base_url = _sb.browser, _sb.base_url  # fixtures (records, statuses: conftest.py's)

SCREENS = [(1280, 800), (390, 844)]
MAINTAINER_WORDS = ("changed", "differs", "expected.yaml", "kb matrix", "kb accept", "accepted")


def _entries_to_measure(statuses) -> list[str]:
    """Entries with a verified workaround and a measured bug: the one most upstream threads report, the entry
    with the longest status tables, and the one with the longest title (it pushes everything down)."""
    from kb.site.pages import answer

    fit = [s for s, st in statuses.items() if s in BY_SLUG and (a := answer(BY_SLUG[s], st))["workaround"]
           and a["engines"]]
    picks = {max(fit, key=lambda s: (len(BY_SLUG[s].meta.upstream), s))}
    picks.add(max(fit, key=lambda s: (sum(len(es.checks) for es in statuses[s].engines), s)))
    picks.add(max(fit, key=lambda s: (len(BY_SLUG[s].meta.title), s)))
    return sorted(picks)


@pytest.fixture(scope="module")
def viewports(browser):  # noqa: F811
    made = {}
    for w, h in SCREENS:
        made[(w, h)] = browser.new_context(viewport={"width": w, "height": h})
        # These pages are read, not searched: with no index to fetch, the search worker never builds one (2 s of
        # CPU for every page opened).
        made[(w, h)].route("**/search/search_index.json", lambda route: route.abort())
    yield made
    for ctx in made.values():
        ctx.close()


def _on_first_screen(locator, height: int, width: int) -> dict:
    assert locator.count() and locator.first.is_visible()
    box = locator.first.bounding_box()
    assert box and box["y"] >= 0 and box["y"] + box["height"] <= height and box["x"] + box["width"] <= width + 1, box
    return box


@pytest.mark.parametrize("width,height", SCREENS, ids=lambda v: str(v))
def test_the_first_screen_shows_the_newest_status_and_the_workaround(viewports, base_url, statuses,  # noqa: F811
                                                                   width, height):
    from kb.engines import ENGINES
    from kb.site.pages import answer

    page = viewports[(width, height)].new_page()
    for slug in _entries_to_measure(statuses):
        st, entry = statuses[slug], BY_SLUG[slug]
        want = answer(entry, st)
        page.goto(base_url + f"{slug}/")
        # nothing pushes the page sideways (a stray tag from a title, a wide table)
        assert page.evaluate("document.documentElement.scrollWidth") <= width, slug
        _on_first_screen(page.locator(".kb-headline .kb-badge"), height, width)
        lines = page.locator(".kb-answer-engine")
        assert lines.count() == len(want["engines"])
        for i, e in enumerate(want["engines"]):
            line = lines.nth(i)
            _on_first_screen(line, height, width)
            es = next(x for x in st.engines if ENGINES[x.engine].shown == e["engine"])
            newest = max(es.versions, key=version_key)
            assert line.inner_text().startswith(f"{e['engine']} {newest}: {e['word']}"), (slug, line.inner_text())
        fix = page.locator(".kb-answer-fix")
        _on_first_screen(fix, height, width)
        assert want["workaround"]["summary"].split()[0] in fix.inner_text()
        _on_first_screen(fix.locator('a[href="#workaround"]'), height, width)
        assert page.locator("#workaround").count() == 1  # the link lands on the section
        if entry.meta.zh:
            _on_first_screen(page.locator('.kb-answer-zh a[href="#zh"]'), height, width)
            assert page.locator("#zh").count() == 1
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"first-screen-{slug}-{width}.png"))
    page.close()


@pytest.mark.parametrize("width,height", SCREENS, ids=lambda v: str(v))
def test_the_status_table_lists_the_newest_release_first_and_fits_the_screen(viewports, base_url, statuses,  # noqa: F811
                                                                           width, height):
    from kb.site.table import LEGEND

    slug = max(statuses, key=lambda s: (sum(len(es.checks) for es in statuses[s].engines), s))
    page = viewports[(width, height)].new_page()
    page.goto(base_url + f"{slug}/")
    assert page.evaluate("document.documentElement.scrollWidth") <= width  # the page never scrolls sideways
    for es in statuses[slug].engines:
        table = page.locator(f'.kb-status-table[data-engine="{es.engine}"]')
        table.scroll_into_view_if_needed()
        heads = table.locator("thead th.kb-version")
        order = [v for i in range(heads.count()) for v in heads.nth(i).get_attribute("data-versions").split()]
        assert order == sorted(es.versions, key=version_key, reverse=True)
        rows = table.locator("tbody tr")
        assert rows.count() <= len(es.checks)  # checks with the same results share a row
        if width < 600:  # a phone: stacked, every cell in view, each saying which releases it is about
            assert table.evaluate("el => el.scrollWidth <= el.clientWidth")
            cells = table.locator("td.kb-cell[data-span]")
            for i in range(cells.count()):
                box = cells.nth(i).bounding_box()
                assert box["x"] >= 0 and box["x"] + box["width"] <= width + 1, box
                label = cells.nth(i).evaluate("el => getComputedStyle(el, '::before').content")  # CSS-generated
                assert cells.nth(i).get_attribute("data-span") + ":" in label, label
        else:  # the newest release's column is in view without scrolling the table
            first = heads.first.bounding_box()
            assert first["x"] + first["width"] <= width
        # public labels only, each explained in the legend
        shown = {table.locator("td.kb-cell[data-label]").nth(i).get_attribute("data-label")
                 for i in range(table.locator("td.kb-cell[data-label]").count())}
        assert shown <= set(LEGEND)
        legend = table.locator(".kb-legend li")
        assert {legend.nth(i).get_attribute("data-label") for i in range(legend.count())} >= shown
        text = table.inner_text()
        assert not [w for w in MAINTAINER_WORDS if w in text], text[:500]
    top = page.locator(".kb-headline").inner_text() + page.locator(".kb-answer").inner_text() + \
        page.locator(".kb-status-note").inner_text()
    assert not [w for w in MAINTAINER_WORDS if w in top.lower()], top
    page.close()


def test_the_home_tables_status_column_is_visible_on_a_phone(viewports, base_url):  # noqa: F811
    page = viewports[(390, 844)].new_page()
    page.goto(base_url)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    head = page.locator(".kb-entries thead th", has_text="Status")
    _on_first_screen(head, 844, 390)
    rows = page.locator("tr.kb-entry")
    assert rows.count() == len(ENTRIES)
    for i in range(rows.count()):
        badges = rows.nth(i).locator(".kb-badge")
        for j in range(badges.count()):
            box = badges.nth(j).bounding_box()
            assert badges.nth(j).is_visible() and box["x"] >= 0 and box["x"] + box["width"] <= 390, \
                (rows.nth(i).get_attribute("data-slug"), box)
            assert badges.nth(j).get_attribute("data-status") != "changed"  # a maintainer state, not a status
    page.close()


@pytest.mark.parametrize("path", ["ops/", "ops/Resize/", "ops/Conv/"])
def test_an_op_pages_tables_scroll_inside_their_box_on_a_phone(viewports, base_url, path):  # noqa: F811
    """An op's tables do not stack as the status table does: on a phone they scroll in their own box, and the page
    does not move sideways (the phone rule that lets the stacked status table overflow once took them too)."""
    page = viewports[(390, 844)].new_page()
    page.goto(base_url + path)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    boxes = page.locator(".kb-scroll")
    assert boxes.count() and any(boxes.nth(i).evaluate("el => el.scrollWidth > el.clientWidth") for i in range(boxes.count()))
    page.close()
