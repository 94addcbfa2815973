"""Real implementations (bench/arch/models_real.py: transformers, timm) through the architecture bench,
kept apart from the hand-written families: their own venv, export cache and labels.

  export   in the bench venv's python (real_env.py), one child at a time, the ways users export them:
             ts17        torch.onnx.export(dynamo=False, opset_version=17)
             ts17-sim    ts17 through onnxsim.simplify
             dyn18       torch.onnx.export(dynamo=True, opset_version=18)
             dyn18-sim   dyn18 through onnxsim.simplify
           into .kb/arch/exports-real/<hash of models_real.py, this file, export.py, models/base.py and the
           venv's versions>/, with export.py's manifests, so export.files() lists them as export.File.
  label    label.relabel (its pipelines and rules unchanged) on those files, written to labels_real.jsonl.

    .venv/bin/python bench/scan_architectures.py --real             # the bench on the real implementations
    .venv/bin/python bench/scan_architectures.py --real --relabel --jobs 1
    .venv/bin/python bench/arch/real.py                              # export what is missing, list the files
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import export  # noqa: E402
import real_env  # noqa: E402

LABELS = HERE / "labels_real.jsonl"
SOURCES = [HERE / "models_real.py", Path(__file__), HERE / "export.py", HERE / "models" / "base.py"]
VARIANTS = {"ts17": (17, False), "dyn18": (18, True)}  # variant -> (opset, dynamo)
SIM_OF = {"ts17-sim": "ts17", "dyn18-sim": "dyn18"}
EXPORT_TIMEOUT = 1800.0


def cache_key() -> str:
    h = hashlib.sha256()
    for p in SOURCES:
        h.update(p.name.encode() + p.read_bytes())
    h.update(json.dumps(real_env.versions(), sort_keys=True).encode())
    return h.hexdigest()[:16]


_DIR: list[Path] = []


def export_dir() -> Path:
    if not _DIR:  # the key asks the venv its versions (a child process): once
        _DIR.append(export.CACHE / "exports-real" / cache_key())
    return _DIR[0]


def _family_names() -> list[str]:
    """The model names in models_real.REAL, read without importing torch or transformers."""
    import ast

    tree = ast.parse((HERE / "models_real.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "REAL":
            return [k.value for k in node.value.keys]
    raise RuntimeError("models_real.py has no REAL")


def failures() -> dict[str, str]:
    """Exports that did not produce a file: '<model>.<variant>' -> the error."""
    return {f"{m['family']}.{v}": item["error"] for m in export.manifests(export_dir(), _family_names())
            for v, item in m["files"].items() if "error" in item}


# ---------------------------------------------------------------------------------------------- child


def _export_model(name: str, out: Path) -> dict:
    """In the bench venv: every variant of one model; a variant that fails is recorded with its error."""
    import contextlib
    import io
    import re
    import traceback
    import warnings

    import numpy as np
    import onnx
    import onnxsim
    import torch

    import models_real

    warnings.filterwarnings("ignore")
    m = models_real.build(name)
    kind = models_real.REAL[name][1]
    module = m.module.eval()
    with torch.no_grad():
        results = module(*m.inputs)
    np.savez(out / f"{name}.inputs.npz", **{n: t.numpy().astype(np.float32) for n, t in zip(m.input_names, m.inputs)})
    np.savez(out / f"{name}.torch.npz", **{n: t.numpy() for n, t in zip(m.output_names, results)})
    files: dict[str, dict] = {}

    def attempt(variant: str, source: str | None, make) -> None:
        path = out / f"{name}.{variant}.onnx"
        if source and files.get(source, {}).get("error"):
            files[variant] = {"source": source, "error": f"its source {source} failed"}
            return
        log = io.StringIO()
        try:
            with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
                make(path)
            onnx.checker.check_model(str(path))
            files[variant] = {"onnx": path.name, "source": source}
        except Exception as e:  # an exporter failing is a finding, not a crash of the bench
            lines = [ln.strip() for ln in "".join(traceback.format_exception_only(type(e), e)).splitlines() if ln.strip()]
            # the dynamo exporter's last line is "(Refer to the full stack trace ...)": its summary says what failed
            summary = next((lines[i + 1] for i, ln in enumerate(lines[:-1]) if ln == "## Exception summary"), None)
            line = re.sub(r"\x1b\[[0-9;]*m", "", summary or lines[0])[:300]
            files[variant] = {"source": source, "error": line}
            path.unlink(missing_ok=True)

    for variant, (opset, dynamo) in VARIANTS.items():
        def make(path: Path, opset=opset, dynamo=dynamo):
            # dynamo=True writes the weights to <file>.data by default; label.py wants them inline
            kwargs = {"external_data": False} if dynamo else {}
            torch.onnx.export(module, m.inputs, str(path), dynamo=dynamo, opset_version=opset,
                              input_names=m.input_names, output_names=m.output_names, **kwargs)
        attempt(variant, None, make)
    for variant, source in SIM_OF.items():
        def make(path: Path, source=source):
            model, ok = onnxsim.simplify(str(out / f"{name}.{source}.onnx"))
            if not ok:
                raise RuntimeError("onnxsim: simplified model failed its check")
            onnx.save(model, str(path))
        attempt(variant, source, make)
    manifest = {"family": name, "kind": kind, "inputs": {n: list(t.shape) for n, t in zip(m.input_names, m.inputs)},
                "outputs": m.output_names, "files": files}
    (out / f"{name}.json").write_text(json.dumps(manifest, indent=1))
    return manifest


# --------------------------------------------------------------------------------------------- parent


def ensure(families: list[str] | None = None, quiet: bool = False) -> list[export.File]:
    """Export the models not yet in the cache, one child process (the bench venv's python) at a time;
    return every file, as export.File."""
    from kb.child import run_command

    if not real_env.PYTHON.exists():
        raise SystemExit(f"no {real_env.VENV.relative_to(ROOT)}: run .venv/bin/python bench/arch/real_env.py")
    out = export_dir()
    out.mkdir(parents=True, exist_ok=True)
    names = families or _family_names()
    for n in [n for n in names if not (out / f"{n}.json").exists()]:
        if not quiet:
            print(f"exporting {n} into {out.relative_to(ROOT)} ...", file=sys.stderr)
        step = run_command("export", [str(real_env.PYTHON), __file__, "--child", str(out), n], timeout=EXPORT_TIMEOUT)
        if not step.ok:
            print(f"export child: {step.fate()}\n{step.output[-3000:]}", file=sys.stderr)
    return export.files(out, names)


def relabel(files: list[export.File], jobs: int = 1, use_cache: bool = True) -> dict:
    """label.relabel on the real files, written to labels_real.jsonl with these exports' failures."""
    import label

    label.LABELS = LABELS  # label.write writes here; labels.jsonl (the hand-written families) stays as it is
    out = label.relabel(files, jobs=jobs, use_cache=use_cache)
    out["about"] = out["about"].replace("scan_architectures.py --relabel", "scan_architectures.py --real --relabel")
    out["export_failures"] = failures()
    label.write(out)
    return out


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        for model in sys.argv[3:]:
            _export_model(model, Path(sys.argv[2]))
    else:
        got = ensure()
        for f in got:
            print(f.name)
        print(f"{len(got)} ONNX files in {export_dir().relative_to(ROOT)}", file=sys.stderr)
        for name, err in sorted(failures().items()):
            print(f"not exported: {name}: {err}", file=sys.stderr)
