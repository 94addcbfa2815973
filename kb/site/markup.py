"""The small HTML pieces every generated part shares: escaping, verdict words, status badges."""

from __future__ import annotations

from html import escape


def h(text) -> str:
    """Escape for HTML text and attributes, on one line."""
    return escape(" ".join(str(text).split()))


def tooltip(lines: list[str]) -> str:
    """A title attribute's value with one line per item; `&#10;` keeps the raw HTML block on one line."""
    return "&#10;".join(h(line) for line in lines if line)


def badge(status: str, label: str) -> str:
    return f'<span class="kb-badge kb-status-{status}" data-status="{status}">{h(label)}</span>'


def verdict(v: str) -> str:
    label = "not yet checked" if v == "not-checked" else v
    return f'<span class="kb-verdict kb-v-{v}">{h(label)}</span>'
