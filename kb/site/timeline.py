"""A check's version history as a cell of the site's status table.

The facts and their wording are kb.history's (Timeline.summary), the same `kb matrix` prints;
the cell's markup is the `history` macro of kb/templates/site/macros.html.j2.
"""

from __future__ import annotations

from markupsafe import Markup

from kb.history import Timeline
from kb.site.markup import macros


def sentence(t: Timeline | None) -> str:
    return "Never observed" if t is None else t.summary()


def cell(t: Timeline | None) -> Markup:
    """The history cell of a check's row; its data attributes are the Timeline's fields."""
    return Markup(macros().history(t, sentence(t)))
