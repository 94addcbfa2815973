"""Labels from engine runs: run every exported file through the engines' pipelines and record what
happened, then derive, per corpus entry, whether the engine fails on the file the way the entry says.

Pipelines (each step is its own child process with a timeout, kb.child):
  mnn                  kb.engines.mnn.convert_step (default flags) -> kb.workers.mnn:run
  mnn-allow-custom-op  the same with --allowCustomOp; only where the default conversion names an op
                       it does not support
  mnn-session          the default conversion run with MNN's Session API (kb.workers.mnn:session), as
                       C++ and older Python code run models
  mnn-quant-ema/-kl    the float .mnn -> kb.workers.mnn:quantize (mnnquant, EMA / KL, calibration in
                       kb.engines.mnn.sequence_calibration) -> run; for the "cnn" and "rnn"
                       families' float files
  onnx2ncnn            kb.engines.onnx2ncnn.convert_step -> kb.workers.ncnn:run (classic layout, no batch axis)
  pnnx                 kb.engines.pnnx.convert_step (from the ONNX file) -> kb.workers.ncnn:run (batch axis kept)
Every pipeline's outputs are compared with onnxruntime on the same file (torch's outputs where
onnxruntime cannot run the file, e.g. custom ops). Tolerance: the largest difference within 1% of
the reference's largest magnitude for float pipelines, 10% where quantization is involved
(an onnxruntime-quantized file or an mnnquant pipeline), per output.

Outcomes: ok, mismatch, nan (any non-finite output), error (a step exited non-zero, timed out, or
wrote nothing), crash (a step was killed by a signal), skipped (a pipeline that does not apply).

Runs are cached in .kb/arch/runs/, keyed by the file's content, the engine versions and RUNS_VERSION,
so a relabel after an engine upgrade reruns everything and otherwise nothing.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import json
import re
import shutil
import sys
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import export  # noqa: E402
from export import CACHE, File  # noqa: E402

from kb.logs import ERRORISH, error_line, steady  # noqa: E402

LABELS = HERE / "labels.jsonl"  # a header line, then one sorted line per file: a relabel diffs by row
RUNS_VERSION = "3"  # bump when a pipeline changes what it runs
FLOAT_TOL, QUANT_TOL = 0.01, 0.1
PIPELINES = ["mnn", "mnn-allow-custom-op", "mnn-session", "mnn-quant-ema", "mnn-quant-kl", "onnx2ncnn", "pnnx"]
# Which engines each pipeline exercises, and whether it is a quantizer pipeline (for the derivation).
PIPELINE_ENGINES = {"mnn": {"mnn"}, "mnn-allow-custom-op": {"mnn"}, "mnn-session": {"mnn"}, "mnn-quant-ema": {"mnn"},
                    "mnn-quant-kl": {"mnn"}, "onnx2ncnn": {"onnx2ncnn", "ncnn"}, "pnnx": {"pnnx", "ncnn"}}
QUANTIZER_PIPELINES = {"mnn-quant-ema", "mnn-quant-kl"}
# The converter each pipeline starts with: a trigger pattern's checks of that engine measure it.
CONVERTER = {"mnn": "mnn", "mnn-allow-custom-op": "mnn", "mnn-session": "mnn", "mnn-quant-ema": "mnn",
             "mnn-quant-kl": "mnn", "onnx2ncnn": "onnx2ncnn", "pnnx": "pnnx"}
UNSUPPORTED_OP = re.compile(r"Not Support", re.IGNORECASE)  # when to try --allowCustomOp
def onnx2ncnn_binary() -> Path | None:
    """kb's onnx2ncnn ($ONNX2NCNN, `kb tools build onnx2ncnn`, or one on PATH): the engine the checks run."""
    from kb.engines.onnx2ncnn import _tool

    tool = _tool()
    return Path(tool) if tool else None


def engine_versions() -> dict[str, str]:
    from kb import versions

    out = {k: versions.of(k) or "absent" for k in ("mnn", "ncnn", "pnnx", "onnxruntime", "torch", "onnx")}
    out["onnxsim"] = versions.of("onnxsim") or "absent"
    from kb.engines.onnx2ncnn import Onnx2Ncnn

    out["onnx2ncnn"] = Onnx2Ncnn.version() or "absent"
    return out


# ------------------------------------------------------------------------------------------- evidence

_SIGS: list[re.Pattern] | None = None


def _signature_regexes() -> list[re.Pattern]:
    """Every log signature's regex in the corpus, read once. Straight from the front matter, so an
    entry that is mid-edit (and fails validation) still contributes its regexes."""
    global _SIGS
    if _SIGS is None:
        import yaml

        from kb.entries import split_front_matter

        _SIGS = []
        for page in sorted((ROOT / "repros").glob("*/README.md")):
            try:
                meta, _ = split_front_matter(page.read_text(encoding="utf-8"), page)
                _SIGS += [re.compile(s["pattern"]) for s in meta.get("signatures", [])
                          if s.get("kind") == "log" and s.get("pattern")]
            except (Exception, yaml.YAMLError) as e:
                print(f"warning: {page.relative_to(ROOT)}: {e}", file=sys.stderr)
    return _SIGS


class Sanitizer:
    def __init__(self, *dirs: Path):
        self.dirs = sorted({str(d) for d in dirs}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for d in self.dirs:
            text = text.replace(d + "/", "").replace(d, ".")
        text = re.sub(r"(?<![\w:/.])(/[\w.+-]+)+/([\w.+-]+)", r"\2", text)  # any other path: its last part
        text = "\n".join(steady(ln) for ln in text.split("\n"))
        return text


def _canonical(lines: list[str]) -> list[str]:
    """onnx2ncnn reports unsupported ops in hash order ("X not supported yet!", each followed by its
    "  # attr" lines): sort each run of such groups, so the same file gives the same excerpt."""
    out, run = [], []
    for ln in lines + [None]:
        if ln is not None and ln.endswith("not supported yet!"):
            run.append([ln])
        elif ln is not None and run and ln.lstrip().startswith("#"):
            run[-1].append(ln)
        else:
            for group in sorted(run):
                out += group
            run = []
            if ln is not None:
                out.append(ln)
    return out


def _excerpt(step, clean: Sanitizer, sigs: list[re.Pattern]) -> str:
    """The lines that matter: any line a corpus log signature matches (first), error-ish lines, the
    last three lines; de-duplicated, in that order, bounded, whitespace runs collapsed."""
    lines = [re.sub(r"\s{2,}", " ", clean(ln.rstrip())) for ln in step.output.splitlines() if ln.strip()]
    lines = _canonical(lines)
    keep = [ln for ln in lines if any(rx.search(ln) for rx in sigs)][:10]
    keep += [ln for ln in lines if ERRORISH.search(ln)][:15] + lines[-3:]
    text = "\n".join(ln[:300] for ln in dict.fromkeys(keep))
    return text[:2500]


def _round(x):
    return None if x is None else float(f"{x:.3g}")


class Pipeline:
    """The steps of one pipeline on one file, and their evidence."""

    def __init__(self, name: str, work: Path, clean: Sanitizer, sigs):
        self.name, self.work, self.clean, self.sigs = name, work, clean, sigs
        self.steps: list[dict] = []
        self.excerpts: list[str] = []
        self.outcome: str | None = None
        self.signal: str | None = None

    def step(self, result, produces: list[Path] = (), label: str | None = None) -> bool:
        result.missing = [p.name for p in produces if not p.exists()]
        fate = "ok" if result.ok else result.fate()
        self.steps.append({"step": label or self.clean(result.name), "fate": fate})
        self.excerpts.append(f"$ {self.clean(result.command)}\n{_excerpt(result, self.clean, self.sigs)}\n[{fate}]")
        if not result.ok:
            self.signal = result.signal
            self.outcome = "crash" if result.signal else "error"
        return result.ok

    def record(self, comparison=None, reference: str | None = None) -> dict:
        out = {"outcome": self.outcome or "ok", "steps": self.steps, "excerpt": "\n".join(self.excerpts)}
        if self.signal:
            out["signal"] = self.signal
        if comparison is not None:
            m = comparison.metrics
            if m.nan:
                out["outcome"] = "nan"
            elif not comparison.close:
                out["outcome"] = "mismatch"
            out["compare"] = comparison.describe()
            out["metrics"] = {"max_abs": _round(m.max_abs), "max_rel": _round(m.max_rel), "nan": m.nan,
                              "total": m.total, "range_tol": m.range_tol}
            out["reference"] = reference
        return out


def skipped(why: str) -> dict:
    return {"outcome": "skipped", "why": why}


# ------------------------------------------------------------------------------------------ one file


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def label_file(f: File, onnx2ncnn: Path | None, work_root: Path, only: set[str] | None = None) -> dict:
    """Run every pipeline (or those in `only`) on one file; return {pipeline: evidence}."""
    from kb.child import run_function
    from kb.compare import Outputs, compare
    from kb.engines import mnn

    work = work_root / f.name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    clean = Sanitizer(work, f.path.parent, ROOT)
    sigs = _signature_regexes()
    src = work / f"{f.name}.onnx"
    shutil.copy(f.path, src)
    if f.path.with_name(f.path.name + ".data").exists():
        raise RuntimeError(f"{f.path.name} has external data; export.py writes every file self-contained")
    result: dict[str, dict] = {}

    # the reference: onnxruntime on this very file; torch's outputs if onnxruntime cannot run it
    ref_out = work / "ort.npz"
    ort = run_function("onnxruntime run", "kb.workers.onnxruntime:run", model=str(src), inputs=str(f.inputs),
                       out=str(ref_out), timeout=120)
    if ort.ok and ref_out.exists():
        with __import__("numpy").load(ref_out) as z:
            arrays = {k: z[k] for k in z.files}
        reference, ref_name = Outputs(f.name, arrays, "onnxruntime"), "onnxruntime"
    elif not f.quantized:
        reference, ref_name = Outputs.load(f.name, f.torch_ref, "torch"), "torch"
    else:
        reference, ref_name = None, None
    ref_note = None if ort.ok else clean(ort.fate() + ": " + error_line(ort.output, last=True))
    tol = QUANT_TOL if f.quantized else FLOAT_TOL

    def judge(p: Pipeline, got_npz: Path, engine: str, range_tol: float) -> dict:
        if reference is None:
            p.outcome = "error"
            p.excerpts.append("no reference: onnxruntime cannot run this file")
            return p.record()
        got = Outputs.load(f.name, got_npz, engine)
        return p.record(compare(got, reference, 0.0, 0.0, range_tol), ref_name)

    # MNN, default flags, then --allowCustomOp where an op is not supported
    def wanted(*names: str) -> bool:
        return only is None or bool(only & set(names))

    for name, flags in (("mnn", []), ("mnn-allow-custom-op", ["--allowCustomOp"])):
        if not wanted(name, *(["mnn-session", "mnn-quant-ema", "mnn-quant-kl"] if name == "mnn" else [])):
            continue
        if name == "mnn-allow-custom-op" and not UNSUPPORTED_OP.search(result["mnn"].get("excerpt", "")):
            result[name] = skipped("the default conversion reported no unsupported op")
            continue
        p = Pipeline(name, work, clean, sigs)
        dst = work / f"{name}.mnn"
        if p.step(mnn.convert_step(src, dst, *flags, name=f"mnnconvert {' '.join(flags)}".strip(), timeout=180), [dst]):
            out = work / f"{name}.out.npz"
            if p.step(run_function("MNN run", "kb.workers.mnn:run", model=str(dst), feed=str(f.inputs), out=str(out),
                                   outputs=f.outputs, shown=f"MNN run {dst.name}", timeout=120), [out]):
                result[name] = judge(p, out, "MNN", tol)
                continue
        result[name] = p.record()
    float_mnn = work / "mnn.mnn" if (work / "mnn.mnn").exists() else None  # converted, however it ran

    # the same float model with the Session API
    if not wanted("mnn-session"):
        pass
    elif float_mnn is None:
        result["mnn-session"] = skipped("the float MNN conversion failed")
    else:
        p = Pipeline("mnn-session", work, clean, sigs)
        out = work / "mnn-session.out.npz"
        if p.step(run_function("MNN session", "kb.workers.mnn:session", model=str(float_mnn), feed=str(f.inputs),
                               out=str(out), outputs=f.outputs, shown=f"MNN session {float_mnn.name}", timeout=120),
                  [out]):
            result["mnn-session"] = judge(p, out, "MNN", tol)
        else:
            result["mnn-session"] = p.record()

    # MNN offline quantization of the float model
    for name, method in (("mnn-quant-ema", "EMA"), ("mnn-quant-kl", "KL")):
        if not wanted(name):
            continue
        if f.kind not in ("cnn", "rnn") or f.quantized:
            result[name] = skipped("mnnquant is run on the float files of the cnn and rnn families")
            continue
        if float_mnn is None or not float_mnn.exists():
            result[name] = skipped("the float MNN conversion failed")
            continue
        p = Pipeline(name, work, clean, sigs)
        cfg = work / f"{name}.json"
        cfg.write_text(json.dumps(mnn.sequence_calibration(work / f"calibration-{method}", f.inputs, f.outputs,
                                                           method), indent=1))
        dst = work / f"{name}.mnn"
        if p.step(run_function(f"mnnquant {method}", "kb.workers.mnn:quantize",
                               argv=["quantized.out", str(float_mnn), str(dst), str(cfg)], cwd=work,
                               shown=f"mnnquant {float_mnn.name} {dst.name} {cfg.name}", timeout=300), [dst]):
            out = work / f"{name}.out.npz"
            if p.step(run_function("MNN run", "kb.workers.mnn:run", model=str(dst), feed=str(f.inputs), out=str(out),
                                   outputs=f.outputs, shown=f"MNN run {dst.name}", timeout=120), [out]):
                result[name] = judge(p, out, "MNN", QUANT_TOL)
                continue
        result[name] = p.record()

    # onnx2ncnn + ncnn (classic layout: blobs named as the ONNX tensors, no batch axis)
    if not wanted("onnx2ncnn"):
        pass
    elif onnx2ncnn is None:
        result["onnx2ncnn"] = skipped("no onnx2ncnn binary")
    else:
        from kb.engines.onnx2ncnn import convert_step

        p = Pipeline("onnx2ncnn", work, clean, sigs)
        param, bin_ = work / "onnx2ncnn.param", work / "onnx2ncnn.bin"
        if p.step(convert_step(src, param, bin_, timeout=120), [param, bin_], label="onnx2ncnn"):
            out = work / "onnx2ncnn.out.npz"
            if p.step(_ncnn_run(param, bin_, f, out, list(f.input_shapes), f.outputs, batch=False), [out]):
                result["onnx2ncnn"] = judge(p, out, "ncnn", tol)
            else:
                result["onnx2ncnn"] = p.record()
        else:
            result["onnx2ncnn"] = p.record()

    # pnnx (from ONNX) + ncnn (blobs in0.., out0..; batch axis kept)
    if wanted("pnnx"):
        from kb.engines.pnnx import convert_step, script_for

        p = Pipeline("pnnx", work, clean, sigs)
        shapes = [str(list(s)).replace(" ", "") for s in f.input_shapes.values()]
        step, param, bin_ = convert_step(src, work / "pnnx", shapes, timeout=300)
        py = script_for(param)
        if p.step(step, [param, bin_], label="pnnx"):
            out = work / "pnnx.out.npz"
            blobs_in = [f"in{i}" for i in range(len(f.input_shapes))]
            blobs_out = [f"out{i}" for i in range(len(f.outputs))]
            feed = _pnnx_feed(f, py if py.exists() else None, work / "pnnx.feed.npz")
            if p.step(_ncnn_run(param, bin_, f, out, blobs_in, blobs_out, batch=True, feed=feed), [out]):
                result["pnnx"] = judge(p, out, "ncnn", tol)
            else:
                result["pnnx"] = p.record()
        else:
            result["pnnx"] = p.record()

    for r in result.values():
        if ref_note and "reference" in r:
            r["reference_note"] = ref_note
    shutil.rmtree(work, ignore_errors=True)
    return result


def _pnnx_batch_axes(script: Path | None) -> dict[str, int | None]:
    """Per input blob, the batch axis pnnx's own <model>_ncnn.py squeezes (None: none)."""
    from kb.engines.pnnx import read_feeding

    feeding = read_feeding(script) if script else None
    return dict(feeding.inputs) if feeding else {}


def _pnnx_feed(f: File, script: Path | None, dst: Path) -> Path:
    """The inputs as pnnx's own <model>_ncnn.py feeds them (`ncnn.Mat(inN.numpy(), batch_index=B)`:
    without the batch axis B), so kb.workers.ncnn:run(batch=True) feeds them as they are."""
    import numpy as np

    axes = _pnnx_batch_axes(script)
    with np.load(f.inputs) as z:
        arrays = {k: z[k] for k in z.files}
    fed = {}
    for i, (k, a) in enumerate(arrays.items()):
        b = axes.get(f"in{i}", 0)
        squeeze = b is not None and b < a.ndim and a.shape[b] == 1
        fed[k] = np.ascontiguousarray(np.squeeze(a, axis=b) if squeeze else a, dtype=np.float32)
    np.savez(dst, **fed)
    return dst


def _ncnn_run(param: Path, bin_: Path, f: File, out: Path, blobs_in: list[str], blobs_out: list[str], batch: bool,
              feed: Path | None = None):
    from kb.child import run_function

    return run_function("ncnn run", "kb.workers.ncnn:run", param=str(param), bin=str(bin_), feed=str(feed or f.inputs),
                        out=str(out), batch=batch, blobs_in=blobs_in, blobs_out=dict(zip(blobs_out, f.outputs)),
                        shown=f"ncnn run {param.name}", timeout=120)


# ---------------------------------------------------------------------------------------- all files


def _ablations_key() -> str:
    """Changes when bench/arch/ablate.py does: its ablation runs are then redone."""
    return hashlib.sha256((HERE / "ablate.py").read_bytes()).hexdigest()[:12]


def ablate_file(f: File, ev: dict, onnx2ncnn: Path | None, work_root: Path) -> dict:
    """Which entries' triggers cause the failures (NaN, mismatch, crash, error) of this file's pipelines.

    For each such pipeline, the ablations (ablate.ABLATIONS) that apply to the file take every trigger
    out at once ("clean"); then each trigger alone is put back (all the other ablations applied). An entry
    causes the failure when the clean file passes and its trigger alone fails the same way.
    Returns {slug: {rewrite, pipelines: {pipeline: {clean, trigger_only}}} | {rewrite, unavailable}}."""
    import dataclasses

    import onnx

    from ablate import ABLATIONS

    original = onnx.load(str(f.path))
    out: dict[str, dict] = {}

    def run(model, tag: str, pipeline: str) -> dict:
        path = work_root / "ablated" / f"{f.name}.{tag}.onnx"
        path.parent.mkdir(parents=True, exist_ok=True)
        onnx.save(model, str(path))
        g = dataclasses.replace(f, name=f"{f.name}.{tag}", path=path)
        return label_file(g, onnx2ncnn, work_root, only={pipeline})[pipeline]

    def apply(slugs: list[str]):
        model = original
        for slug in slugs:
            model = ABLATIONS[slug].rewrite(model) or model
        return model

    for pipeline in dict.fromkeys(p for a in ABLATIONS.values() for p in a.pipelines):
        failure = ev.get(pipeline, {}).get("outcome")
        if failure not in ("nan", "mismatch", "crash", "error"):
            continue
        applicable = []
        for slug, a in ABLATIONS.items():
            if pipeline not in a.pipelines:
                continue
            try:
                changed = a.rewrite(original)
            except Exception as e:  # the rewrite does not apply to this file: its failure stays unattributed
                out.setdefault(slug, {"rewrite": a.name, "unavailable": f"{type(e).__name__}: {e}"[:240]})
                continue
            if changed is not None:
                applicable.append(slug)
        if not applicable:
            continue
        try:
            clean = run(apply(applicable), "clean-" + "-".join(ABLATIONS[s].name for s in applicable), pipeline)
        except Exception as e:
            for slug in applicable:
                out.setdefault(slug, {"rewrite": ABLATIONS[slug].name, "unavailable": f"{type(e).__name__}: {e}"[:240]})
            continue
        for slug in applicable:
            others = [s for s in applicable if s != slug]
            only = run(apply(others), f"only-{ABLATIONS[slug].name}", pipeline) if others else ev[pipeline]
            entry = out.setdefault(slug, {"rewrite": ABLATIONS[slug].name, "pipelines": {}})
            entry.setdefault("pipelines", {})[pipeline] = {
                "clean": clean["outcome"], "trigger_only": only["outcome"], "with": [ABLATIONS[s].name for s in others],
                "clean_excerpt": clean.get("excerpt", ""), "trigger_only_excerpt": only.get("excerpt", ""),
                "clean_signal": clean.get("signal"), "trigger_only_signal": only.get("signal")}
    return out


def _run_key(f: File, versions: dict) -> str:
    h = hashlib.sha256()
    h.update(f.path.read_bytes())
    h.update(f.inputs.read_bytes())
    h.update(json.dumps([f.name, f.kind, RUNS_VERSION, versions], sort_keys=True).encode())
    return h.hexdigest()[:20]


def relabel(files: list[File] | None = None, jobs: int = 2, use_cache: bool = True) -> dict:
    """Run (or take from the run cache) every pipeline on every file; write and return labels.jsonl."""
    files = files if files is not None else export.ensure()
    onnx2ncnn = onnx2ncnn_binary()
    versions = engine_versions()
    _signature_regexes()
    runs = CACHE / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    work_root = CACHE / "work"
    lock = threading.Lock()
    done = [0]

    def one(f: File) -> tuple[str, tuple[dict, dict]]:
        key = _run_key(f, versions)
        cached, cached_ablations = runs / f"{key}.json", runs / f"{key}.ablations-{_ablations_key()}.json"
        if use_cache and cached.exists():
            ev = json.loads(cached.read_text())
        else:
            ev = label_file(f, onnx2ncnn, work_root)
            cached.write_text(json.dumps(ev, indent=1, sort_keys=True))
        if use_cache and cached_ablations.exists():
            abl = json.loads(cached_ablations.read_text())
        else:
            abl = ablate_file(f, ev, onnx2ncnn, work_root)
            cached_ablations.write_text(json.dumps(abl, indent=1, sort_keys=True))
        with lock:
            done[0] += 1
            print(f"[{done[0]}/{len(files)}] {f.name}: " + ", ".join(
                f"{k}={v['outcome']}" for k, v in ev.items() if v["outcome"] != "skipped") + "".join(
                f"; {slug} {a['rewrite']}: " + ", ".join(f"{k} clean={v['clean']} trigger only={v['trigger_only']}"
                                                      for k, v in a.get("pipelines", {}).items())
                for slug, a in abl.items()), file=sys.stderr)
        return f.name, (ev, abl)

    with cf.ThreadPoolExecutor(jobs) as pool:
        results = dict(pool.map(one, files))
    out = {
        "about": "Written by `bench/scan_architectures.py --relabel` (bench/arch/label.py): the engines' outcome "
                 "per exported file and pipeline. Whether that is the failure an entry describes is derived from "
                 "this evidence and the entry's signatures by label.fails_as_described.",
        "engines": versions,
        "tolerance": {"float": f"max diff <= {FLOAT_TOL:g} x max|reference|",
                      "quantized": f"max diff <= {QUANT_TOL:g} x max|reference|"},
        "export_failures": export.failures(),
        "files": {},
    }
    for f in sorted(files, key=lambda f: f.name):
        ev, abl = results[f.name]
        out["files"][f.name] = {
            "family": f.family, "kind": f.kind, "variant": f.variant, "sha256": _sha(f.path)[:16],
            "pipelines": ev, "ablations": abl,
        }
    write(out)
    return out


def write(labels: dict) -> None:
    head = {k: v for k, v in labels.items() if k != "files"}
    lines = [json.dumps(head, sort_keys=True)]
    lines += [json.dumps({"file": name, **row}, sort_keys=True) for name, row in sorted(labels["files"].items())]
    LABELS.write_text("\n".join(lines) + "\n")


def load() -> dict:
    head, *rows = [json.loads(line) for line in LABELS.read_text().splitlines() if line.strip()]
    return {**head, "files": {r.pop("file"): r for r in rows}}


# ---------------------------------------------------------------------------------------- derivation


def signature_hits(entry, pipelines: dict[str, dict], ablations: dict | None = None) -> list[str]:
    """Every piece of evidence, in `pipelines` (one file's engine runs), that the engine failed the way
    this entry describes.

    Rule: a pipeline is in the entry's scope when it exercises one of the entry's `engines` and is a
    quantizer pipeline (mnn-quant-*) exactly when the entry's `components` include "quantizer".
    In such a pipeline a signature is seen when
      log        its regex matches a line of the pipeline's recorded output;
      crash      its regex matches the signal that killed one of the pipeline's steps;
      nan        the pipeline's outputs contain NaN or infinity;
      mismatch   its outputs differ from the reference beyond tolerance, without NaN.
    A hit says the failure is THIS entry's only when it is specific: a log signature whose message
    is not generic in the message index (repros/_messages), or any hit together with the entry's
    own `evidence` in the pipeline's output (what `kb explain` calls a match), or a NaN or mismatch
    that goes away when the entry's ablation (bench/arch/ablate.py) takes its trigger out of the file
    (`ablations`, from label.ablate_file). A generic message, a crash, NaN or a mismatch alone has many
    causes: such failures are reported as unattributed.
    Hits are listed by pipeline (label.PIPELINES order), then in the entry's signature order, as
    "pipeline: signature (kind): evidence".
    """
    from kb.match.rules import evidence

    meta = entry.meta
    index = _message_index()
    quantizer = "quantizer" in meta.components
    hits = []
    for name in PIPELINES:
        ev = pipelines.get(name)
        if ev is None or ev["outcome"] == "skipped" or quantizer != (name in QUANTIZER_PIPELINES):
            continue
        if not PIPELINE_ENGINES[name] & set(meta.engines):
            continue
        excerpt = ev.get("excerpt", "")
        # What a user's log of this pipeline holds: for MNN, the default conversion before it too.
        before = pipelines.get("mnn", {}).get("excerpt", "") if name.startswith("mnn-") else ""
        own = bool(evidence(entry, f"{before}\n{excerpt}"))
        ablated = ((ablations or {}).get(entry.slug) or {}).get("pipelines", {}).get(name, {})
        # a silent failure: it goes away with every known trigger out, and comes back with this one alone
        gone = ablated.get("clean") == "ok" and ablated.get("trigger_only") == ev["outcome"]
        for sig in meta.signatures:
            hit = None
            if sig.kind == "log":
                hit = next((ln for ln in excerpt.splitlines() if sig.regex().search(ln)), None)
                msg = index.get(sig.message or "")
                specific = not sig.message or (msg is not None and not msg.generic)
                # a generic message: it goes away with every known trigger out, and comes back with this one
                moved = bool(ablated) and not sig.regex().search(ablated.get("clean_excerpt", "")) \
                    and bool(sig.regex().search(ablated.get("trigger_only_excerpt", "")))
                hit = hit if (specific or own or moved) else None
                hit = hit and hit + ("" if specific or own else f"; not without the trigger ({ablations[entry.slug]['rewrite']})")
            elif sig.kind == "crash" and ev.get("signal") and sig.regex().search(ev["signal"]):
                moved = bool(ablated) and ablated.get("clean_signal") != ev["signal"] \
                    and ablated.get("trigger_only_signal") == ev["signal"]
                hit = f"killed by {ev['signal']}" if (own or moved) else None
            elif sig.kind in ("nan", "mismatch") and ev["outcome"] in sig.outcomes() and (own or gone):
                hit = ev.get("compare", "NaN outputs" if ev["outcome"] == "nan" else "outputs differ")
                hit += "" if own else f"; ok without the trigger ({ablations[entry.slug]['rewrite']})"
            if hit:
                hits.append(f"{name}: {sig.id} ({sig.kind}): {hit.strip()[:240]}")
    return hits


_INDEX: dict = {}


def _message_index() -> dict:
    if not _INDEX:
        from kb import messages

        _INDEX.update(messages.load_all())
    return _INDEX


def fails_as_described(entry, pipelines: dict[str, dict], ablations: dict | None = None) -> str | None:
    """The label: the first of signature_hits (whose docstring states the rule), or None."""
    hits = signature_hits(entry, pipelines, ablations)
    return hits[0] if hits else None


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-cache", action="store_true", help="rerun every engine step")
    ap.add_argument("--only", nargs="*", help="file names (family.variant) to label, for debugging; "
                                              "labels.jsonl is not written")
    args = ap.parse_args()
    families = sorted({n.split(".")[0] for n in args.only}) if args.only else None
    if unknown := sorted(set(families or ()) - set(export._family_names())):
        ap.error(f"no such family: {', '.join(unknown)}")
    fs = export.ensure(families)
    if args.only:
        if missing := sorted(set(args.only) - {f.name for f in fs}):
            ap.error(f"not exported: {', '.join(missing)} (python bench/arch/export.py lists the files)")
        o = onnx2ncnn_binary()
        for f in fs:
            if f.name in args.only:
                print(json.dumps({f.name: label_file(f, o, CACHE / "work")}, indent=1))
    else:
        relabel(fs, use_cache=not args.no_cache)
