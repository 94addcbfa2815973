"""The README's module map is the code's: a module imports kb modules of its own layer or above only."""

import ast
from pathlib import Path

KB = Path(__file__).resolve().parent.parent / "kb"
LAYERS = {  # the README's map, top (0) to bottom
    0: ["verdicts", "tags", "errors", "paths", "yamlio", "versions", "engines", "logs"],  # engines: the registry, kb/engines/__init__.py
    1: ["pattern", "pipelines", "schema", "entries", "messages", "records", "expectations", "checks", "history",
        "status", "compare", "conformance", "opfigures", "ways"],
    2: ["child", "target", "forkserver", "zygote", "export", "blocks", "artifacts", "judge", "harness", "engines.*", "workers", "tools", "envs", "matrix",
        "accepting", "conform", "torchcases"],
    3: ["match", "site", "locate", "reduce", "fromonnx"],
    4: ["contracts", "pytest_plugin", "cli", "scaffold", "__main__", "__init__"],
}


def layer(module: str) -> int:
    for n, names in LAYERS.items():
        for name in names:
            if module == name or (name.endswith(".*") and module.startswith(name[:-1])) or \
                    (not name.endswith(".*") and module.startswith(name + ".") and name != "engines"):
                return n
    raise AssertionError(f"kb.{module} is not on the README's module map")


def imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kb"):
            names = [node.module] if node.module != "kb" else [f"kb.{a.name}" for a in node.names]
            found |= {n.removeprefix("kb.") for n in names}
        elif isinstance(node, ast.Import):
            found |= {a.name.removeprefix("kb.") for a in node.names if a.name.startswith("kb.")}
    return found


def test_every_module_imports_only_its_layer_or_above():
    wrong = []
    for path in sorted(KB.rglob("*.py")):
        module = ".".join(path.relative_to(KB).with_suffix("").parts)
        module = module.removesuffix(".__init__") if module != "__init__" else module
        mine = layer(module)
        for dep in imports(path):
            if layer(dep) > mine:
                wrong.append(f"kb.{module} (layer {mine}) imports kb.{dep} (layer {layer(dep)})")
    assert not wrong, "\n".join(wrong)
