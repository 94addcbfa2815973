"""A check's version history as a cell of the site's status table.

The facts and their wording are kb.history's (Timeline.summary), the same `kb matrix` prints.
"""

from __future__ import annotations

from kb.history import Timeline
from kb.site.markup import h


def sentence(t: Timeline | None) -> str:
    return "Never observed" if t is None else t.summary()


def cell(t: Timeline | None) -> str:
    """The history cell of a check's row; its data attributes are the Timeline's fields."""
    attrs = ""
    if t is not None:
        attrs = (f' data-last-affected="{h(t.last_affected or "")}" data-first-fixed="{h(t.first_fixed or "")}"'
                 f' data-inferred="{str(t.inferred).lower()}" data-regressions="{h(" ".join(t.regressions))}"'
                 f' data-shape-changes="{h(" ".join(t.shape_changes))}"')
    return f'<td class="kb-history"{attrs}>{h(sentence(t))}</td>'
