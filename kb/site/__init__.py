"""The documentation site: one page per entry, generated from the entries and their recorded results.

    build(out_docs_dir)  write the Markdown pages (mkdocs' hook calls it before every build)
    build_site()         generate, then `mkdocs build --strict`   (kb site build)
    serve()              `mkdocs serve` with live reload           (kb site serve)
"""

from kb.site.generate import build
from kb.site.run import build_site, serve

__all__ = ["build", "build_site", "serve"]
