"""Addresses on the knowledge base's site: entry pages and the search."""

from __future__ import annotations

import os
from urllib.parse import quote

DEFAULT_SITE_URL = "http://127.0.0.1:8000/"  # where `kb site serve` listens
SITE_URL_ENV = "KB_SITE_URL"  # set it to the published site


def site_url() -> str:
    """$KB_SITE_URL, else mkdocs.yml's `site_url` (the published site), else the local server."""
    base = os.environ.get(SITE_URL_ENV) or _configured() or DEFAULT_SITE_URL
    return base if base.endswith("/") else base + "/"


def _configured() -> str | None:
    import re

    from kb.paths import repo_root

    try:
        text = (repo_root() / "mkdocs.yml").read_text(encoding="utf-8")
    except OSError:
        return None
    m = re.search(r"^site_url:\s*['\"]?([^'\"\s#]+)", text, re.MULTILINE)
    return m[1] if m else None


def page_url(slug: str) -> str:
    return f"{site_url()}{slug}/"  # mkdocs.yml: use_directory_urls, so each entry lives at /<slug>/


def message_url(message_id: str) -> str:
    return f"{site_url()}messages/{message_id}/"  # kb/site/messages.py: the message index's pages


def search_url(query: str) -> str:
    # mkdocs-material opens its search box, filled in, when a page is loaded with ?q=
    return f"{site_url()}?q={quote(query, safe='')}"


LOCATE = "kb locate model.onnx --engine mnn|onnx2ncnn|pnnx"  # the next step where no entry matches
