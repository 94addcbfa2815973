"""A check's version history in words, from the fields of kb.history's Timeline.

The facts (which version was last affected, first fixed, regressed) are kb.history's alone, the same
`kb matrix` prints; only the wording is the site's, with the unmeasured versions named.
"""

from __future__ import annotations

from kb.envs import sort_versions
from kb.history import Timeline
from kb.site.markup import h

# How each kind of check names a bad version, a good one, the first good one after the last bad
# one, bad after good, and a history with no bad version at all.
WORDS = {"bug": {"bad": "affected", "good": "not affected", "first good": "first fixed", "again": "regressed in",
                 "all good": "not affected in any measured version"},
         "workaround": {"bad": "broken", "good": "works", "first good": "works from", "again": "stopped working in",
                        "all good": "works in every measured version"}}


def gap(t: Timeline) -> list[str]:
    """The versions between last affected and first fixed that were asked for but not measured."""
    if not (t.inferred and t.last_affected and t.first_fixed):
        return []
    asked = sort_versions([p.version for p in t.points] + t.unmeasured)
    lo, hi = asked.index(t.last_affected), asked.index(t.first_fixed)
    return [v for v in asked[lo + 1:hi] if v in t.unmeasured]


def _list(versions: list[str]) -> str:
    return versions[0] if len(versions) == 1 else ", ".join(versions[:-1]) + " and " + versions[-1]


def phrases(t: Timeline | None) -> list[str]:
    """What the measured versions say, most important first."""
    if t is None:
        return ["never observed"]
    if not t.points:  # only errors, or versions that could not be installed
        return ["no version measured"]
    w = WORDS.get(t.kind, WORDS["bug"])
    out = []
    if t.first_fixed:
        words = f"last {w['bad']} {t.last_affected}, {w['first good']} {t.first_fixed}"
        if t.inferred:  # the fix happened somewhere in a range with unmeasured versions
            missing = gap(t)
            words += f" (inferred: {_list(missing)} {'was' if len(missing) == 1 else 'were'} not measured)"
        out.append(words)
    elif len(t.points) == 1:  # one version is no history yet, only what it showed
        p = t.points[0]
        out.append(f"{w['bad'] if t.last_affected else w['good']} in {p.version}, the only version measured")
    elif t.last_affected:  # no good version after it: it is the newest measured
        out.append(f"still {w['bad']} in {t.last_affected} (newest measured)")
    else:
        out.append(f"{w['all good']} ({t.points[0].version} to {t.points[-1].version})")
    if t.regressions:
        out.append(f"{w['again']} " + _list(t.regressions))
    if t.shape_changes:
        out.append("fails differently from " + _list(t.shape_changes))
    return out


def sentence(t: Timeline | None) -> str:
    text = "; ".join(phrases(t))
    return text[0].upper() + text[1:]


def cell(t: Timeline | None) -> str:
    """The history cell of a check's row; its data attributes are the Timeline's fields."""
    attrs = ""
    if t is not None:
        attrs = (f' data-last-affected="{h(t.last_affected or "")}" data-first-fixed="{h(t.first_fixed or "")}"'
                 f' data-inferred="{str(t.inferred).lower()}" data-regressions="{h(" ".join(t.regressions))}"'
                 f' data-shape-changes="{h(" ".join(t.shape_changes))}"')
    return f'<td class="kb-history"{attrs}>{h(sentence(t))}</td>'
