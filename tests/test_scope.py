"""Measured scope: each entry's trigger pattern matches exactly the variants its engine fails on.

Generated from every real entry's own data: its `variants()` in repro.py, the `variant-*` checks
that run them, and the verdicts accepted for them (on the newest version accepted):
- a variant that reproduces the entry's signature must be matched (else scan misses it);
- a variant the engine handles (fixed) must not be matched (else scan raises a false alarm);
- a variant that fails some other way (differs) may be matched: the model is broken on that engine
  either way, and the entry's page says how the two failures differ.
A disagreement names the variant and both sides.
"""

from __future__ import annotations

import onnx
import pytest

from kb import expectations
from kb.artifacts import prepare
from kb.checks import load_checks
from kb.entries import load_all
from kb.pattern import find
from kb.verdicts import Verdict
from kb.versions import version_key

ENTRIES = load_all()


def _variant_checks(entry):
    return [c for c in load_checks(entry).items.values() if c.variant]


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.slug for e in ENTRIES])
def test_trigger_matches_exactly_the_variants_the_engine_fails_on(entry):
    checks = _variant_checks(entry)
    if not checks:
        pytest.skip(f"{entry.slug} declares no variants yet")
    table = expectations.load(entry.expected)
    arts = prepare(entry)
    labels, disagreements = {}, []
    for c in checks:
        accepted = table.get(c.name)
        if not accepted:
            pytest.fail(f"{entry.slug}/{c.name}: no accepted verdict; run `kb check {entry.slug}` and `kb accept`")
        newest = max(accepted, key=version_key)
        verdict = accepted[newest].verdict
        affected = verdict == Verdict.REPRODUCES
        matched = bool(find(entry.meta.trigger, onnx.load(str(arts.onnx(c.variant)), load_external_data=False)))
        labels[c.variant] = affected
        if (affected and not matched) or (verdict == Verdict.FIXED and matched):
            disagreements.append(f"{c.variant}: engine says {accepted[newest].verdict} on {c.engine} {newest}, "
                                 f"trigger pattern {'matches' if matched else 'does not match'}")
    if entry.meta.guard and not any(labels.values()):
        pytest.skip(f"{entry.slug} is a regression guard: no variant fails on the versions measured")
    assert not disagreements, f"{entry.slug}: " + "; ".join(disagreements)
    assert len(checks) >= 8, f"{entry.slug}: {len(checks)} variants; an entry's scope needs at least 8"
