"""An entry's title fits a phone's screen in a few lines (issue 29): the detail goes to the page's body."""

import pytest

from kb.entries import load_all, load_entry
from kb.errors import KBError
from kb.schema import TITLE_MAX

from tests.test_entries import GUARD, edit_page

OLD = 'title: "Fake: Sigmoid then Mul (SiLU) drifts after conversion"'


def test_every_entry_title_is_short():
    long = {e.slug: len(e.meta.title) for e in load_all() if len(e.meta.title) > TITLE_MAX}
    assert not long, f"titles over {TITLE_MAX} characters: {long}"


def test_a_long_title_is_refused_in_one_line_naming_the_file(fixture_entry):
    folder = fixture_entry(GUARD)
    edit_page(folder, OLD, 'title: "' + "x" * (TITLE_MAX + 1) + '"')
    with pytest.raises(KBError) as e:
        load_entry(folder)
    msg = str(e.value)
    assert "README.md" in msg and "field 'title'" in msg and f"{TITLE_MAX + 1} characters" in msg
    assert "\n" not in msg


def test_a_title_at_the_limit_is_accepted(fixture_entry):
    folder = fixture_entry(GUARD)
    edit_page(folder, OLD, 'title: "' + "x" * TITLE_MAX + '"')
    assert len(load_entry(folder).meta.title) == TITLE_MAX
