"""mkdocs hooks, named in mkdocs.yml: generate the pages before mkdocs reads docs/, then give them
their stable addresses, so a plain `mkdocs build` or `mkdocs serve` is the whole site build."""

from __future__ import annotations

import html
import os
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

from kb.errors import KBError
from kb.site import generate, ops

GENERATED = "entries"  # docs/entries/: generated, gitignored
_SCRIPTS: dict[str, str] = {}  # the search box's scripts of the last build (generate.Site.scripts)


def corpus_root(config) -> Path:
    """$KB_ROOT (as everywhere in kb), else the folder of mkdocs.yml."""
    return Path(os.environ["KB_ROOT"]) if "KB_ROOT" in os.environ else Path(config.config_file_path).parent


def on_config(config):
    root = corpus_root(config)
    try:
        site = generate.build(Path(config.docs_dir) / GENERATED, root, generate.records_dir(root))
    except (KBError, OSError) as e:  # a broken entry or a missing corpus: one line, no traceback
        raise PluginError(f"kb: {e}") from None
    _SCRIPTS.clear()
    _SCRIPTS.update(site.scripts)
    config.nav = [{"Home": f"{GENERATED}/{generate.HOME}"}] + [
        {engine: [{title: f"{GENERATED}/{name}"} for title, name in items]} for engine, items in site.entry_nav.items()]
    if site.message_nav:  # the message index: /messages/<id>/
        # mkdocs prints nav titles as HTML: a message's <placeholder> must reach the reader as text
        config.nav.append({"Messages": [{html.escape(title, quote=False): f"{GENERATED}/{name}"}
                                        for title, name in site.message_nav]})
    if site.op_nav:  # the op pages: /ops/ and /ops/<Op>/
        config.nav.append({"ONNX ops": ops.nav_sections([(t, f"{GENERATED}/{name}") for t, name in site.op_nav])})
    if site.redirects:
        redirects = config.plugins.get("redirects")
        if redirects is None:
            raise PluginError("kb: entries have aliases, but the mkdocs-redirects plugin is not enabled")
        # Former slugs keep working: /<old-slug>/ (and its anchors) forwards to /<slug>/.
        redirects.config["redirect_maps"] = {
            **redirects.config["redirect_maps"],
            **{f"{old}.md": f"{GENERATED}/{new}.md" for old, new in site.redirects.items()},
        }
    return config


@event_priority(100)  # before mkdocs-redirects notes the pages' addresses
def on_files(files: Files, config) -> Files:
    """entries/<slug>.md is served at /<slug>/, entries/messages/<id>.md at /messages/<id>/, entries/ops/<Op>.md
    at /ops/<Op>/ (entries/ops/index.md at /ops/) and entries/index.md at /: addresses stay short and independent of where the generator writes."""
    for f in list(files):
        if not (f.src_uri.startswith(f"{GENERATED}/") and f.is_documentation_page()):
            continue
        name = f.src_uri[len(GENERATED) + 1:]
        if "/" in name and not (name.startswith(("messages/", "ops/")) and name.count("/") == 1):
            continue
        dest = ("index.html" if name == generate.HOME else "ops/index.html" if name == "ops/index.md"
                else f"{name[:-3]}/index.html")
        files.remove(f)
        files.append(File(f.src_uri, f.src_dir, f.dest_dir, f.use_directory_urls, dest_uri=dest,
                          inclusion=f.inclusion))
    # The search box reads pasted text by kb explain's own rules, written out from their one definition.
    for path, text in _SCRIPTS.items():
        files.append(File.generated(config, path, content=text))
    return files


def on_serve(server, config, builder):
    """Rebuild when an entry, a record or a conformance ledger changes, not only when docs/ does."""
    root = corpus_root(config)
    for path in (root / "repros", generate.records_dir(root), root / "conformance"):
        if path.is_dir():
            server.watch(str(path))
    return server
