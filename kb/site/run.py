"""Build or serve the site from Python: what `kb site build` and `kb site serve` call."""

from __future__ import annotations

import logging
import shutil
import sys
from pathlib import Path

from kb.entries import repo_root

log = logging.getLogger("mkdocs")


def config_file() -> Path:
    """mkdocs.yml of this checkout: beside the corpus, else beside the kb package."""
    for candidate in (repo_root() / "mkdocs.yml", Path(__file__).resolve().parents[2] / "mkdocs.yml"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError("mkdocs.yml not found next to repros/ or the kb package")


def _log_to_stderr(level: int) -> None:
    if not log.handlers:  # mkdocs' own CLI installs one; from kb there is none
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(levelname)-7s -  %(message)s"))
        log.addHandler(handler)
    log.setLevel(level)


def _static_docs(cfg: Path, docs_dir: Path) -> None:
    """A separate docs dir (tests, bench) gets the static assets; pages are generated into it."""
    from mkdocs.utils import yaml_load

    with cfg.open(encoding="utf-8") as f:
        src = cfg.parent / (yaml_load(f).get("docs_dir") or "docs")
    if src.resolve() == docs_dir.resolve():
        return
    from kb.site.hooks import GENERATED

    shutil.copytree(src, docs_dir, dirs_exist_ok=True, ignore=lambda d, names: [GENERATED] if Path(d) == src else [])


def build_site(site_dir: Path | None = None, *, docs_dir: Path | None = None, config: Path | None = None,
               strict: bool = True, log_level: int = logging.INFO) -> Path:
    """Generate the pages and run `mkdocs build` (strict: any warning fails). Returns the site dir.

    Entries come from $KB_ROOT (else this checkout), records from $KB_RECORDS (else <root>/.kb/records).
    Raises a click exception (mkdocs' Abort, PluginError, ConfigurationError) on failure.
    """
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    _log_to_stderr(log_level)
    cfg = config or config_file()
    overrides: dict = {"strict": strict}
    if site_dir is not None:
        overrides["site_dir"] = str(site_dir)
    if docs_dir is not None:
        _static_docs(cfg, Path(docs_dir))
        overrides["docs_dir"] = str(docs_dir)
    mk = load_config(str(cfg), **overrides)
    build(mk)
    return Path(mk.site_dir)


def serve(dev_addr: str = "127.0.0.1:8000", *, config: Path | None = None, open_in_browser: bool = False) -> None:
    """`mkdocs serve` with live reload; also rebuilds when repros/ or the records change."""
    from mkdocs.commands.serve import serve as mkdocs_serve

    _log_to_stderr(logging.INFO)
    # At the root of the local address, not under site_url's path (/kb/): that is the published one.
    mkdocs_serve(config_file=str(config or config_file()), dev_addr=dev_addr, open_in_browser=open_in_browser,
                 site_url=f"http://{dev_addr}/")
