"""Render the Markdown of the site: one page per entry, and the home page listing them all.

Generated parts are raw HTML blocks (escaped here, so no Markdown rule can reinterpret a log line);
headings and code stay Markdown so the toc, anchors and highlighting work as on any page.
A raw HTML block ends at a blank line, so none of them may contain one.
"""

from __future__ import annotations

import json
import re

import yaml

from kb.entries import Entry
from kb.schema import Signature
from kb.site import svg
from kb.site.markup import badge, verdict
from kb.site.markup import h as _h
from kb.status import STATUS_LABEL, CheckStatus, EntryStatus
from kb.site.table import engine_table
from kb.versions import version_key

# Environment keys shown under "Reproduce it yourself", in this order; others follow.
ENV_ORDER = ("torch", "onnx", "onnxruntime", "mnn", "ncnn", "pnnx", "python")
PAGE_BOOST = 2  # entry pages above any other page in search


def _code_span(text: str) -> str:
    """An inline code span that survives any backticks in `text`."""
    ticks = "`" * (max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _fence(source: str, lang: str, title: str = "") -> str:
    ticks = "`" * max(3, max((len(m) for m in re.findall(r"`{3,}", source)), default=0) + 1)
    head = f'{lang} title="{title}"' if title else lang
    return f"{ticks}{head}\n{source.rstrip()}\n{ticks}"


def _front_matter(data: dict) -> str:
    return "---\n" + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000) + "---\n"


def chips(kind: str, values: list[str], base: str) -> str:
    """Links to the home page filtered by this engine or tag."""
    return " ".join(f'<a class="kb-chip kb-chip-{kind}" href="{base}?{kind}={_h(v)}">{_h(v)}</a>' for v in values)


# ---------------------------------------------------------------- status


def _headline(st: EntryStatus) -> str:
    if st.status == "changed":
        engine = {cs.check.name: cs.check.engine for cs in st.checks()}
        pairs = ", ".join(f"{c} on {engine[c]} {v}" for c, v in st.changed)
        return (f"The newest record disagrees with the accepted result for {_h(pairs)}. "
                f"Review it, then run <code>kb accept</code>.")
    if st.observed:
        return f"Newest observation: {_h(st.observed)}."
    return "No check of this entry has been recorded or accepted yet."


# ---------------------------------------------------------------- sections


def _signature(sig: Signature, statuses: list[CheckStatus]) -> str:
    heading = _code_span(sig.example) if sig.example else sig.id
    lines = [f"### {heading} {{ #sig-{sig.id} .kb-sig }}", ""]
    lines.append(f'<p class="kb-sig-meta"><code>{_h(sig.id)}</code> ({_h(sig.kind)}): {_h(sig.summary)}</p>')
    if sig.example:
        # The example again as a block: what a user pastes is exactly what the index holds.
        lines += ["", _fence(sig.example, "text"), ""]
    facts = []
    if sig.pattern:
        facts.append(f"matched by <code>{_h(sig.pattern)}</code>")
    watch = [cs for cs in statuses if sig.id in cs.check.signatures]
    if watch:
        facts.append("looked for by " + ", ".join(f"<code>{_h(cs.check.name)}</code>" for cs in watch))
    seen = [(cs.check.name, v, c) for cs in watch for v, c in cs.cells.items() if c.signature == sig.id]
    if seen:
        name, v, c = max(seen, key=lambda s: (s[2].observed, version_key(s[1])))
        facts.append(f"last seen {_h(c.observed)} by <code>{_h(name)}</code> on {_h(v)}")
    if facts:
        text = "; ".join(facts)
        lines.append(f'<p class="kb-sig-facts">{text[0].upper()}{text[1:]}.</p>')
    return "\n".join(lines)


def _workarounds(entry: Entry, statuses: list[CheckStatus]) -> str:
    if not entry.meta.workarounds:
        return ""
    rows = []
    for w in entry.meta.workarounds:
        mine = [cs for cs in statuses if cs.check.workaround == w.id]
        if not mine:
            checks = "<td>no check verifies it</td><td>—</td>"
        else:
            names = "<br>".join(f"<code>{_h(cs.check.name)}</code>" for cs in mine)
            latest = []
            for cs in mine:
                n = cs.newest()
                latest.append(f"{verdict(n[1].verdict)} <small>{_h(cs.check.engine)} {_h(n[0])}, "
                              f"{_h(n[1].observed)}</small>" if n else verdict("not-checked"))
            checks = f"<td>{names}</td><td>{'<br>'.join(latest)}</td>"
        label = f"<td><code>{_h(w.id)}</code><br>{_h(w.summary)}</td>"
        rows.append(f'<tr data-workaround="{_h(w.id)}">{label}{checks}</tr>')
    return "\n".join([
        "## Verified workarounds { #verified-workarounds }", "",
        '<div class="kb-workarounds">', "<table>",
        "<thead><tr><th>Workaround</th><th>Verified by</th><th>Latest verdict</th></tr></thead>",
        "<tbody>", *rows, "</tbody>", "</table>", "</div>",
    ])


def _reproduce(entry: Entry, st: EntryStatus) -> str:
    out = ["## Reproduce it yourself { #reproduce }", "",
           "From a checkout of this knowledge base, with its Python environment:", "",
           _fence(f"pytest repros/{entry.slug}\nkb check {entry.slug}", "bash"), ""]
    rec = st.newest_record
    if rec is None:
        platforms = sorted({c.platform for cs in st.checks() for c in cs.cells.values()})
        since = (f"the accepted results above were observed on {_h(', '.join(platforms))}" if platforms
                 else "nothing about this entry has been accepted yet either")
        out.append(f"<p>No recorded run is part of this build (records live in <code>.kb/records</code>); "
                   f"{since}.</p>")
        return "\n".join(out)
    env = sorted(rec.versions.items(), key=lambda kv: (ENV_ORDER.index(kv[0]) if kv[0] in ENV_ORDER else 99, kv[0]))
    rows = "".join(f'<tr data-package="{_h(k)}"><td>{_h(k)}</td><td><code>{_h(v)}</code></td></tr>' for k, v in env)
    when = rec.started.strftime("%Y-%m-%d %H:%M UTC")
    out.append(f"<p>Last checked {_h(when)} (run <code>{_h(rec.run)}</code>) with:</p>")
    out.append(f'<div class="kb-env"><table><thead><tr><th>package</th><th>version</th></tr></thead><tbody>{rows}'
               f'<tr data-package="platform"><td>platform</td><td><code>{_h(rec.platform)}</code></td></tr>'
               f"</tbody></table></div>")
    return "\n".join(out)


def _guard(guard, st: EntryStatus) -> str:
    """A regression guard's note: what upstream says fixed it, and what the checks show now."""
    if st.status == "fixed":
        now = "Every bug check passes on every version measured here, so this entry guards against a regression."
    else:
        now = f"It is declared a regression guard, but its checks now say: {STATUS_LABEL[st.status]}."
    if guard.fixed_in:
        up = f"Upstream fixed it in {_h(guard.fixed_in)}"
        up += f' (<a href="https://github.com/{guard.source.replace("#", "/issues/")}">{_h(guard.source)}</a>).' \
            if guard.source else "."
    else:
        up = "Upstream names no release that fixed it."
    oldest = min((v for es in st.engines for v in es.versions), key=version_key, default=None)
    before = (f" No release older than {_h(oldest)} can be installed here to measure it." if oldest else "")
    note = f" {_h(guard.note)}" if guard.note else ""
    return f'<p class="kb-guard"><strong>Regression guard.</strong> {_h(now)} {up}{before}{note}</p>'


def entry_page(entry: Entry, st: EntryStatus) -> str:
    m = entry.meta
    statuses = st.checks()
    parts = [
        _front_matter({"title": f"{m.id} · {m.title}", "description": m.title, "kb_id": m.id,
                       "search": {"boost": PAGE_BOOST}}),
        f"# {m.id} · {m.title}",
        "",
        f'<p class="kb-headline">{badge(st.status, st.label)} <span class="kb-id">{m.id}</span> '
        f'<span class="kb-headline-text">{_headline(st)}</span></p>',
        f'<p class="kb-meta">Engines: {chips("engine", m.engines, "../")} · Tags: {chips("tag", m.tags, "../")}'
        f" · Symptom: {_h(m.symptom)} · Components: {_h(', '.join(m.components))} · Added {m.added}</p>",
        "",
        "## Status { #status }",
        "",
        '<p class="kb-status-note">Every verdict below comes from a recorded check run: the newest record of '
        "each check and engine version, or else the accepted observation in <code>expected.yaml</code>. "
        "The history reads them the way <code>kb matrix</code> does.</p>",
        "",
        *[x for es in st.engines for x in (engine_table(es), "")],
    ]
    if not st.engines:
        parts += ["<p>This entry declares no checks yet.</p>", ""]
    if m.guard:
        parts += [_guard(m.guard, st), ""]
    parts += [entry.body.strip(), ""]
    parts += ["## Signatures { #signatures }", "",
              "<p>What the checks look for in the engines' output. Paste a line from your own log into the "
              "search box to find the entry.</p>", ""]
    parts += [x for sig in m.signatures for x in (_signature(sig, statuses), "")]
    parts += ["## Trigger pattern { #trigger }", "",
              "<p>The subgraph a model must contain to be affected, drawn from the entry's declared pattern.</p>", ""]
    for p in m.trigger:
        parts += [f'<figure class="kb-pattern" data-pattern="{_h(p.name)}">\n{svg.draw(p)}\n'
                  f"<figcaption><code>{_h(p.name)}</code>: {_h(p.summary)}</figcaption>\n</figure>", ""]
    parts += [_workarounds(entry, statuses), ""]
    parts += [_reproduce(entry, st), ""]
    # Sources are read at build time from the files pytest runs, so the page cannot drift from them.
    # They are left out of the search index: identifiers in code would outrank real log lines.
    parts += ['## Minimal reproducer { #reproducer data-search-exclude="true" }', "",
              _fence(entry.repro.read_text(encoding="utf-8"), "python", f"repros/{entry.slug}/repro.py"), ""]
    parts += ['## Checks { #checks data-search-exclude="true" }', "",
              _fence(entry.test.read_text(encoding="utf-8"), "python", f"repros/{entry.slug}/test_checks.py"), ""]
    if m.upstream:
        items = "".join(f'<li><a href="{u.url}">{_h(u.ref)}</a>' + (f": {_h(u.note)}" if u.note else "") + "</li>"
                        for u in m.upstream)
        parts += ["## Upstream { #upstream }", "", f'<ul class="kb-upstream">{items}</ul>', ""]
    return "\n".join(parts)


# ---------------------------------------------------------------- home


def home_page(rows: list[tuple[Entry, EntryStatus]]) -> str:
    engines = sorted({e for entry, _ in rows for e in entry.meta.engines})
    tags = sorted({t for entry, _ in rows for t in entry.meta.tags})
    statuses = [s for s in STATUS_LABEL if any(st.status == s for _, st in rows)]

    def select(name: str, label: str, values: list[str], shown=lambda v: v) -> str:
        opts = "".join(f'<option value="{_h(v)}">{_h(shown(v))}</option>' for v in values)
        return (f'<label class="kb-filter">{label} <select id="kb-filter-{name}" data-filter="{name}">'
                f'<option value="">all</option>{opts}</select></label>')

    body = []
    for entry, st in sorted(rows, key=lambda r: r[0].meta.id):
        m = entry.meta
        body.append(
            f'<tr class="kb-entry" data-slug="{entry.slug}" data-engines="{_h(json.dumps(m.engines))}" '
            f'data-tags="{_h(json.dumps(m.tags))}" data-status="{st.status}">'
            f"<td>{m.id}</td><td><a href=\"{entry.slug}/\">{_h(m.title)}</a></td>"
            f"<td>{chips('engine', m.engines, '')}</td><td>{chips('tag', m.tags, '')}</td>"
            f"<td>{badge(st.status, st.label)}</td></tr>")
    return "\n".join([
        _front_matter({"title": "Conversion bugs", "search": {"exclude": True}, "hide": ["toc"]}),
        "# PyTorch → ONNX → MNN / ncnn conversion bugs",
        "",
        f"<p>{len(rows)} entries, each with a minimal reproducer and checks that run on every engine version "
        "we test. The status comes from the recorded runs. Paste a line from an engine's log into the "
        "search box to find its entry.</p>",
        "",
        '<div class="kb-filters">' + select("engine", "Engine", engines) + select("tag", "Tag", tags)
        + select("status", "Status", statuses, STATUS_LABEL.get)
        + '<span class="kb-filter-count" id="kb-filter-count" aria-live="polite"></span></div>',
        "",
        '<div class="kb-entries">', "<table>",
        "<thead><tr><th>Id</th><th>Title</th><th>Engines</th><th>Tags</th><th>Status</th></tr></thead>",
        "<tbody>", *body, "</tbody>", "</table>", "</div>",
        "",
    ])
