"""Render the Markdown of the site: one page per entry, and the home page listing them all.

The markup is in kb/templates/site/ (entry.md.j2, home.md.j2, autoescaped); this module gathers what
they show. Generated parts are raw HTML blocks (escaped, so no Markdown rule can reinterpret a log
line); headings and code stay Markdown so the toc, anchors and highlighting work as on any page.
A raw HTML block ends at a blank line, so none of them may contain one: the templates print every
value on one line (kb.site.markup).
"""

from __future__ import annotations

import json

import yaml
from markupsafe import Markup

from kb.entries import Entry
from kb.schema import Signature
from kb.site import svg
from kb.site.markup import macros, render
from kb.site.table import engine_table
from kb.status import (STATUS_LABEL, CheckStatus, EntryStatus, engine_status, public_status,
                           verified_workaround)
from kb.verdicts import CheckKind, Status, Verdict
from kb.versions import version_key

# Environment keys shown under "Reproduce it yourself", in this order; others follow.
ENV_ORDER = ("torch", "onnx", "onnxruntime", "mnn", "ncnn", "pnnx", "python")
PAGE_BOOST = 2  # entry pages above any other page in search


def _front_matter(data: dict) -> Markup:
    """YAML, not HTML: mkdocs reads it before any Markdown."""
    return Markup("---\n" + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000) + "---")


def chips(kind: str, values: list[str], base: str) -> Markup:
    """Links to the home page filtered by this engine or tag."""
    return Markup(macros().chips(kind, values, base))


# ---------------------------------------------------------------- status


def headline(st: EntryStatus, answer: dict) -> dict:
    """The badge under the title: the public status, with the engine and release it holds for."""
    status = public_status(st)
    where = next((e for e in answer["engines"] if e["state"] == status), None)
    label = status.label + (f" · {where['engine']} {where['newest']}" if where else "")
    return {"status": str(status), "label": label}


# ---------------------------------------------------------------- sections


def _signature(sig: Signature, statuses: list[CheckStatus], messages: dict | None) -> dict:
    watch = [cs for cs in statuses if sig.id in cs.check.signatures]
    seen = [(cs.check.name, v, c) for cs in watch for v, c in cs.cells.items() if c.signature == sig.id]
    last = None
    if seen:
        name, v, c = max(seen, key=lambda s: (s[2].observed, version_key(s[1])))
        last = {"check": name, "version": v, "observed": c.observed}
    from kb.site.messages import message_link

    return {"sig": sig, "watch": [cs.check.name for cs in watch], "seen": last,
            "message": message_link(sig, messages)}


def _workarounds(entry: Entry, statuses: list[CheckStatus]) -> list[dict]:
    out = []
    for w in entry.meta.workarounds:
        checks = []
        for cs in statuses:
            if cs.check.workaround != w.id:
                continue
            n = cs.newest()
            newest = {"version": n[0], "verdict": n[1].verdict, "observed": n[1].observed} if n else None
            limit = next((lim.note for lim in w.limits if lim.check == cs.check.name), None)
            checks.append({"name": cs.check.name, "engine": cs.check.engine, "newest": newest, "limit": limit})
        out.append({"workaround": w, "checks": checks})
    return out


def _guard(guard, st: EntryStatus) -> dict:
    """A regression guard's note: what upstream says fixed it, and what the checks show now."""
    status = public_status(st)
    bug = [c for c in st.checks() if c.check.kind == CheckKind.BUG]
    older = sorted({v for c in bug for v, cell in c.cells.items() if cell.verdict == Verdict.REPRODUCES},
                   key=version_key)
    measured = sorted({v for c in bug for v in c.cells}, key=version_key)
    if older and measured[:len(older)] == older and len(older) > 2:  # the oldest ones, in a row
        older = [f"{older[0]} to {older[-1]}"]
    if status == Status.FIXED and older:
        now = (f"Every bug check passes on the newest releases measured here, so this entry guards against a "
               f"regression; it still reproduces on {', '.join(older)}.")
    elif status == Status.FIXED:
        now = "Every bug check passes on every version measured here, so this entry guards against a regression."
    else:
        now = f"It is declared a regression guard, but its checks now say: {status.label}."
    url = f'https://github.com/{guard.source.replace("#", "/issues/")}' if guard.source else None
    oldest = min((v for es in st.engines for v in es.versions), key=version_key, default=None)
    return {"now": now, "fixed_in": guard.fixed_in, "source": guard.source, "url": url, "oldest": oldest,
            "note": guard.note}


def _environment(st: EntryStatus) -> list[tuple[str, str]]:
    rec = st.newest_record
    if rec is None:
        return []
    return sorted(rec.versions.items(), key=lambda kv: (ENV_ORDER.index(kv[0]) if kv[0] in ENV_ORDER else 99, kv[0]))


def answer(entry: Entry, st: EntryStatus) -> dict:
    """The first screen's answer: per engine, newest release first, whether it is affected, since when it
    is fixed, what range was measured; and the best workaround verified on the newest release."""
    from kb.engines import ENGINES
    from kb.status import summary_at
    from kb.verdicts import CheckKind

    engines, best = [], None
    for es in st.engines:
        if not any(cs.check.kind == CheckKind.BUG for cs in es.checks) or not es.versions:
            continue
        states = {v: summary_at(es, v)[0] for v in es.versions}
        newest = es.versions[-1]
        fixed_from = None
        for v in reversed(es.versions):
            if states[v] != Status.FIXED:
                break
            fixed_from = v
        engines.append({"engine": ENGINES[es.engine].shown, "newest": newest, "word": entry.meta.kind.answer(states[newest]),
                        "state": str(states[newest]),
                        "fixed": "never" if fixed_from is None else "every release measured"
                        if fixed_from == es.versions[0] else fixed_from,
                        "range": es.versions[0] if len(es.versions) == 1 else f"{es.versions[0]}–{newest}"})
    w = verified_workaround(entry.meta.workarounds, st.checks())
    if w is not None:
        best = {"summary": w.workaround.sentence, "engine": ENGINES[w.engine].shown, "version": w.version,
                "scope": w.workaround.scope, "spread": w.spread,
                "limits": [note for _, note, _ in w.limits]}
    return {"engines": engines, "workaround": best}


def _rows(entry: Entry) -> str | None:
    """The front matter's check rows, as written there."""
    if not entry.meta.checks:
        return None
    rows = [r.model_dump(exclude_defaults=True) for r in entry.meta.checks]
    return yaml.safe_dump({"checks": rows}, sort_keys=False, allow_unicode=True, width=120, default_flow_style=None)


def entry_page(entry: Entry, st: EntryStatus, messages: dict | None = None, op_pages: frozenset[str] = frozenset()
               ) -> str:
    """`op_pages`: the ops that have an op page (/ops/<Op>/): those its trigger names are linked."""
    from kb.site.ops import trigger_ops

    m = entry.meta
    statuses = st.checks()
    front = {"title": f"{m.id} · {m.title}", "description": m.title, "kb_id": m.id, "search": {"boost": PAGE_BOOST}}
    first = answer(entry, st)
    return render(
        "entry.md.j2",
        front_matter=_front_matter(front),
        m=m, st=st, slug=entry.slug,
        head=headline(st, first),
        answer=first,
        tables=[engine_table(es) for es in st.engines],
        guard=_guard(m.guard, st) if m.guard else None,
        body=Markup(entry.body.strip()),  # the entry's own Markdown, written by us
        signatures=[_signature(sig, statuses, messages) for sig in m.signatures],
        patterns=[{"pattern": p, "svg": svg.draw(p)} for p in m.trigger],
        op_links=[op for op in trigger_ops(entry) if op in op_pages],
        workarounds=_workarounds(entry, statuses),
        record=st.newest_record,
        env=_environment(st),
        platforms=sorted({c.platform for cs in statuses for c in cs.cells.values()}),
        repro=entry.repro.read_text(encoding="utf-8"),
        rows=_rows(entry),
        test=entry.test.read_text(encoding="utf-8") if entry.test.is_file() else None,
    )


# ---------------------------------------------------------------- home


def home_page(rows: list[tuple[Entry, EntryStatus]]) -> str:
    entries = []
    for entry, st in sorted(rows, key=lambda r: r[0].meta.id):
        engines = [(es.engine, engine_status(es)) for es in st.engines]
        entries.append({"entry": entry, "m": entry.meta, "status": public_status(st), "engines": engines,
                        "engines_json": json.dumps(entry.meta.engines), "tags_json": json.dumps(entry.meta.tags),
                        "statuses_json": json.dumps(dict(engines)),
                        "workaround": "verified" if verified_workaround(entry.meta.workarounds, st.checks()) else "none"})
    shown = {e["status"] for e in entries} | {s for e in entries for _, s in e["engines"]}
    return render(
        "home.md.j2",
        front_matter=_front_matter({"title": "Conversion bugs", "search": {"exclude": True}, "hide": ["toc"]}),
        entries=entries,
        engine_options=[(e, e) for e in sorted({e for entry, _ in rows for e in entry.meta.engines})],
        tag_options=[(t, t) for t in sorted({t for entry, _ in rows for t in entry.meta.tags})],
        statuses=[(s, label) for s, label in STATUS_LABEL.items() if s in shown],
        labels=STATUS_LABEL,
    )
