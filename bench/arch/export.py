"""Export every family of bench/arch/models/ the ways users do, into a content-keyed cache.

Per family (`VARIANTS`):
  ts13, ts17      torch.onnx.export(dynamo=False, opset_version=13 / 17); ts14 instead of ts13 for the
                  models opset 13 cannot express (scaled_dot_product_attention), as users do
  dyn18           torch.onnx.export(dynamo=True, opset_version=18): torch 2.13's default exporter
  ts13-sim, dyn18-sim   the same run through onnxsim.simplify (when onnxsim is installed)
and for the "cnn" families, onnxruntime quantization of the float exports (kb.workers.onnxruntime):
  ts13-qdq, ts13-qdq-pc, dyn18-qdq   quantize_static, QuantFormat.QDQ (per tensor / per channel)
  ts13-qop                           quantize_static, QuantFormat.QOperator
  ts13-dynq                          quantize_dynamic

The cache is .kb/arch/exports/<key>/, key = hash of models/*.py, this file and the versions of torch,
onnx, onnxruntime and onnxsim: editing a model re-exports everything, nothing else does. torch runs
in child processes (two, one per core), each exporting a share of the families.

    python bench/arch/export.py            # export what is missing, list the files
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CACHE = ROOT / ".kb" / "arch"
SIM_OF = {"ts13-sim": "ts13", "dyn18-sim": "dyn18"}
# name -> (source variant, method, format, options)
QUANT_OF = {
    "ts13-qdq": ("ts13", "static", "QDQ", {}),
    "ts13-qdq-pc": ("ts13", "static", "QDQ", {"per_channel": True}),
    "dyn18-qdq": ("dyn18", "static", "QDQ", {}),
    "ts13-qop": ("ts13", "static", "QOperator", {}),
    "ts13-dynq": ("ts13", "dynamic", "QOperator", {}),
}
EXPORT_TIMEOUT = 1500.0


@dataclass(frozen=True)
class File:
    """One exported ONNX file and what is needed to run it."""

    name: str  # "<family>.<variant>", the key in labels.jsonl
    family: str
    kind: str  # "cnn", "rnn", "other"
    variant: str
    path: Path
    inputs: Path  # .npz of the example inputs, by input name
    torch_ref: Path  # .npz of torch's outputs, by output name
    input_shapes: dict
    outputs: list

    @property
    def quantized(self) -> bool:
        return self.variant.replace("ts14", "ts13") in QUANT_OF


def _versions() -> dict[str, str]:
    import importlib.metadata as md

    out = {}
    for dist in ("torch", "onnx", "onnxruntime", "onnxsim"):
        try:
            out[dist] = md.version(dist)
        except md.PackageNotFoundError:
            out[dist] = "absent"
    return out


MODELS = sorted((HERE / "models").glob("*.py"))  # the families, one module each, and their registry


def cache_key() -> str:
    h = hashlib.sha256()
    for p in (*MODELS, Path(__file__)):
        h.update(p.name.encode() + p.read_bytes())
    h.update(json.dumps(_versions(), sort_keys=True).encode())
    return h.hexdigest()[:16]


def export_dir() -> Path:
    return CACHE / "exports" / cache_key()


# ---------------------------------------------------------------------------------------------- child


def _export_family(name: str, out: Path) -> dict:
    """In the child: every variant of one family; a variant that fails is recorded with its error."""
    import contextlib
    import io
    import traceback

    import numpy as np
    import onnx
    import torch

    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(ROOT))
    import models
    from kb.workers.onnxruntime import quantize

    _, kind = models.FAMILIES[name]
    m = models.build(name)
    module = m.module.eval()
    with torch.no_grad():
        result = module(*m.inputs)
    results = result if isinstance(result, (tuple, list)) else (result,)
    inputs_npz, ref_npz = out / f"{name}.inputs.npz", out / f"{name}.torch.npz"
    np.savez(inputs_npz, **{n: t.numpy().astype(np.float32) for n, t in zip(m.input_names, m.inputs)})
    np.savez(ref_npz, **{n: t.numpy() for n, t in zip(m.output_names, results)})
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
            onnx.checker.check_model(str(path)) if not m.export_kwargs else None
            files[variant] = {"onnx": path.name, "source": source}
        except Exception as e:  # an exporter/quantizer failing is a finding, not a crash of the bench
            line = "".join(traceback.format_exception_only(type(e), e)).strip().splitlines()[-1][:300]
            files[variant] = {"source": source, "error": line}
            path.unlink(missing_ok=True)

    def torch_export(opset: int, dynamo: bool):
        def make(path: Path):
            # dynamo=True writes the weights to <file>.data by default; inline them, the files are small
            kwargs = {"external_data": False} if dynamo else dict(m.export_kwargs)
            torch.onnx.export(module, m.inputs, str(path), dynamo=dynamo, opset_version=opset,
                              input_names=m.input_names, output_names=m.output_names, **kwargs)
        return make

    attempt("ts13", None, torch_export(13, False))
    low = "ts13"
    if "opset version 13 is not supported" in files["ts13"].get("error", ""):
        # e.g. scaled_dot_product_attention (timm, diffusers) needs opset 14: users move to 14, so do we;
        # the sim and quantized variants then start from ts14
        attempt("ts14", None, torch_export(14, False))
        low = "ts14"
    attempt("ts17", None, torch_export(17, False))
    attempt("dyn18", None, torch_export(18, True))
    try:
        import onnxsim
    except ImportError:
        onnxsim = None
    if onnxsim is not None:
        for variant, source in SIM_OF.items():
            variant, source = variant.replace("ts13", low), source.replace("ts13", low)

            def make(path: Path, source=source):
                model, ok = onnxsim.simplify(str(out / f"{name}.{source}.onnx"))
                if not ok:
                    raise RuntimeError("onnxsim: simplified model failed its check")
                onnx.save(model, str(path))
            attempt(variant, source, make)
    if kind == "cnn":
        for variant, (source, method, fmt, options) in QUANT_OF.items():
            variant, source = variant.replace("ts13", low), source.replace("ts13", low)

            def make(path: Path, source=source, method=method, fmt=fmt, options=options):
                quantize(str(out / f"{name}.{source}.onnx"), str(inputs_npz), str(path), method, fmt, options)
            attempt(variant, source, make)
    manifest = {"family": name, "kind": kind, "inputs": {n: list(t.shape) for n, t in zip(m.input_names, m.inputs)},
                "outputs": m.output_names, "files": files}
    (out / f"{name}.json").write_text(json.dumps(manifest, indent=1))
    return manifest


def _child_main(out: str, names: list[str]) -> None:
    for name in names:
        _export_family(name, Path(out))


# --------------------------------------------------------------------------------------------- parent


def ensure(families: list[str] | None = None, jobs: int = 2, quiet: bool = False) -> list[File]:
    """Export the families not yet in the cache (in `jobs` child processes); return every file."""
    import concurrent.futures as cf

    sys.path.insert(0, str(ROOT))
    from kb.child import run_command

    out = export_dir()
    out.mkdir(parents=True, exist_ok=True)
    names = families or _family_names()
    todo = [n for n in names if not (out / f"{n}.json").exists()]
    if todo:
        if not quiet:
            print(f"exporting {len(todo)} families into {out.relative_to(ROOT)} ...", file=sys.stderr)
        shares = [todo[i::jobs] for i in range(jobs) if todo[i::jobs]]
        with cf.ThreadPoolExecutor(len(shares)) as pool:
            steps = list(pool.map(lambda share: run_command(
                "export", [sys.executable, __file__, "--child", str(out), *share], timeout=EXPORT_TIMEOUT), shares))
        for step in steps:
            if not step.ok:
                print(f"export child: {step.fate()}\n{step.output[-3000:]}", file=sys.stderr)
    return files(out, names)


def _family_names() -> list[str]:
    """The family names, read without importing torch (the parent stays light)."""
    import ast

    tree = ast.parse((HERE / "models" / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "FAMILIES":
            return [k.value for k in node.value.keys]
    raise RuntimeError("models/__init__.py has no FAMILIES")


def manifests(out: Path | None = None, names: list[str] | None = None) -> list[dict]:
    out = out or export_dir()
    return [json.loads((out / f"{n}.json").read_text()) for n in names or _family_names() if (out / f"{n}.json").exists()]


def files(out: Path | None = None, names: list[str] | None = None) -> list[File]:
    out = out or export_dir()
    found = []
    for man in manifests(out, names):
        fam = man["family"]
        for variant, item in man["files"].items():
            if "onnx" in item:
                found.append(File(f"{fam}.{variant}", fam, man["kind"], variant, out / item["onnx"],
                                  out / f"{fam}.inputs.npz", out / f"{fam}.torch.npz", man["inputs"], man["outputs"]))
    return sorted(found, key=lambda f: f.name)


def failures(out: Path | None = None) -> dict[str, str]:
    """Exports that did not produce a file: '<family>.<variant>' -> the error."""
    return {f"{m['family']}.{v}": item["error"] for m in manifests(out) for v, item in m["files"].items()
            if "error" in item}


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        _child_main(sys.argv[2], sys.argv[3:])
    else:
        got = ensure()
        for f in got:
            print(f.name)
        print(f"{len(got)} ONNX files in {export_dir().relative_to(ROOT)}", file=sys.stderr)
        for name, err in sorted(failures().items()):
            print(f"not exported: {name}: {err}", file=sys.stderr)
