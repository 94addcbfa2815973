"""The templates every generated part is rendered with, and the small pieces they share.

The pages' markup lives in kb/templates/site/*.j2; Python only prepares the data. Autoescaping is
on for every template, and every value a template prints is put on one line first (`_one_line`):
a raw HTML block ends at a blank line, so no log line or detail may bring one in. What is already
markup (`Markup`: a rendered part, a Markdown fence, the entry's own text) passes unchanged.
"""

from __future__ import annotations

import re

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape


_SPACE = re.compile(r"\s+")


def _one_line(value):
    if isinstance(value, str) and not isinstance(value, Markup):
        return _SPACE.sub(" ", value)
    return value


def h(text) -> Markup:
    """Escape for HTML text and attributes, on one line."""
    return escape(" ".join(str(text).split()))


def tooltip(lines) -> Markup:
    """A title attribute's value with one line per item; `&#10;` keeps the raw HTML block on one line."""
    return Markup("&#10;").join(h(line) for line in lines if line)


def code_span(text: str) -> Markup:
    """A Markdown inline code span that survives any backticks in `text` (Markdown, so not escaped), on one line:
    a message or signature id spread over lines in YAML is one span."""
    text = " ".join(text.split())
    ticks = "`" * (max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return Markup(f"{ticks}{pad}{text}{pad}{ticks}")


def fence(source: str, lang: str, title: str = "") -> Markup:
    """A Markdown fenced code block holding `source` verbatim (Markdown, so not escaped)."""
    ticks = "`" * max(3, max((len(m) for m in re.findall(r"`{3,}", source)), default=0) + 1)
    head = f'{lang} title="{title}"' if title else lang
    return Markup(f"{ticks}{head}\n{source.rstrip()}\n{ticks}")


_MD = str.maketrans({c: f"&#{ord(c)};" for c in "*_\\`[]{}#+-.!|"})


def code_html(text: str) -> Markup:
    """Inline code as HTML that Markdown leaves alone: for regexes, whose `<![`, `*` and `\\` Markdown
    would otherwise read as a marked section, emphasis or escapes."""
    return Markup(f"<code>{str(escape(' '.join(text.split()))).translate(_MD)}</code>")


_CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def md_text(text: str) -> Markup:
    """Text for a Markdown line (a heading, a paragraph of prose): HTML cannot get in, Markdown's own punctuation
    stays. A `code span` is left as written: Markdown shows its text literally (escaped, it showed `&lt;`)."""
    def esc(part: str) -> str:
        return part.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

    line, out, at = " ".join(str(text).split()), [], 0
    for m in _CODE_SPAN.finditer(line):
        out += [esc(line[at:m.start()]), m[0]]
        at = m.end()
    return Markup("".join(out + [esc(line[at:])]))


def _lower_bool(value: bool) -> str:
    return str(bool(value)).lower()


env = Environment(
    loader=PackageLoader("kb", "templates/site"),
    autoescape=select_autoescape(enabled_extensions=("j2",), default=True, default_for_string=True),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    finalize=_one_line,
)
env.filters.update(tooltip=tooltip, code_span=code_span, code_html=code_html, fence=fence, md_text=md_text,
                   bool=_lower_bool)


def render(template: str, **data) -> Markup:
    return Markup(env.get_template(template).render(**data))


def macros():
    """The macros every template imports (badge, verdict, chips), callable from Python too."""
    return env.get_template("macros.html.j2").module


def badge(status: str, label: str) -> Markup:
    return Markup(macros().badge(status, label))


def verdict(v: str) -> Markup:
    return Markup(macros().verdict(v))
