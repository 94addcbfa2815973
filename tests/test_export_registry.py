"""kb.export builds dynamo's registry of torchlib functions once per process (it was 60% of an export's time),
and its decomposition tables once (a quarter of what was left), compiles torch's py_impl with its annotations
left unevaluated (a fifth of a small export), and makes each composite-op override once (40% of what was left):
the graphs it writes are the same as with none of this (all 2,540 of the corpus's, measured; two here)."""

import subprocess
import sys

SCRIPT = r"""
import sys, torch, onnx
from torch import nn
import kb.export as E
from torch.onnx._internal.exporter import _registration as R, _decomp as D

if sys.argv[1] == "fresh":
    E._registry_once = lambda: None
calls = []
build = R.ONNXRegistry.from_torchlib.__func__
R.ONNXRegistry.from_torchlib = classmethod(lambda cls, *a, **k: calls.append(1) or build(cls, *a, **k))
tables = []
table = D.create_onnx_friendly_decomposition_table
D.create_onnx_friendly_decomposition_table = lambda ops: tables.append(1) or table(ops)
from torch.export import exported_program as EP
overrides = []
override = EP._override_composite_implicit_decomp
EP._override_composite_implicit_decomp = lambda cia: overrides.append(1) or override(cia)
E._registry_once()
torch.manual_seed(0)
m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.Hardswish(), nn.LayerNorm(6), nn.Flatten(), nn.LazyLinear(2)).eval()
x = torch.randn(1, 3, 8, 8)
m(x)
out = []
for opset in (18, 18, 17, 20):
    p = f"{sys.argv[2]}/{len(out)}.onnx"
    torch.onnx.export(m, (x,), p, dynamo=True, opset_version=opset, input_names=["x"], output_names=["y"])
    g = onnx.load(p)
    del g.metadata_props[:]
    for n in g.graph.node:
        del n.metadata_props[:]
    out.append(g.SerializeToString(deterministic=True).hex())
print("RESULT", len(calls), len(tables), int(getattr(torch._ops.OperatorBase.py_impl, "kb_lazy", False)), len(overrides),
      *out)
"""


def _run(mode, tmp_path):
    p = subprocess.run([sys.executable, "-c", SCRIPT, mode, str(tmp_path)], capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    calls, tables, lazy, overrides, *graphs = next(ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")).split()[1:]
    return (int(calls), int(tables), int(lazy), int(overrides)), graphs


def test_the_registry_built_once_writes_the_same_graphs(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    once, graphs = _run("once", tmp_path / "a")
    fresh, want = _run("fresh", tmp_path / "b")
    # built for every export before; now once, for every opset (opsets below 18 use 18's registry and table); torch's
    # composite-op override runs for every export before, and now only while the ops' kernels start otherwise than
    # at an earlier export (the first export changes them: torch drops fake-tensor rules it did not add)
    assert (fresh, once) == ((4, 4, 0, 4), (1, 1, 1, 2))
    assert graphs == want


REPRO = r"""
import torch
from torch import nn
from kb.export import Case

torch.manual_seed(0)
NET = nn.Sequential(nn.Conv2d(3, 4, 3), nn.Hardswish(), nn.Flatten(), nn.Linear(144, 5))
X = torch.randn(2, 3, 8, 8)


def cases():
    yield Case("net", NET, (X,), dynamo=False, torchscript=True, ways=["dynamo", "opset17-onnxsim"])
    yield Case("threads", NET, (torch.full((1, 3, 8, 8), float(torch.get_num_threads())),), dynamo=True)
"""


def _files(folder):
    """Each file's bytes; of a TorchScript zip, its code and data (not the random id and the call stack
    of its debug info, which differ between any two runs)."""
    import zipfile

    out = {}
    for f in sorted(folder.iterdir()):
        if f.suffix == ".pt":
            z = zipfile.ZipFile(f)
            out[f.name] = {n.split("/", 1)[1]: z.read(n) for n in z.namelist()
                           if not n.endswith(("debug_pkl", "serialization_id"))}
        else:
            out[f.name] = f.read_bytes()
    return out


def test_an_export_forked_from_the_warm_server_writes_what_a_fresh_process_writes(tmp_path):
    """kb.artifacts forks each entry's export from a Python that loaded torch and ran the exporters once
    (kb.export.warm, on one thread): every file is the one a fresh Python writes, and the reproducer runs with
    torch's own thread count (fed to the model, so it is in the inputs file)."""
    import numpy as np
    import torch

    from kb import child
    from kb.artifacts import WARM

    repro = tmp_path / "repro.py"
    repro.write_text(REPRO)
    got = {}
    for how, preload in (("fresh", ()), ("warm", WARM)):
        (tmp_path / how).mkdir()
        step = child.run_function("torch export", "kb.export:export_entry", preload=preload, timeout=600,
                                  repro=str(repro), out=str(tmp_path / how))
        assert step.ok, step.output[-2000:]
        got[how] = _files(tmp_path / how)
    assert got["warm"] == got["fresh"]
    assert {"net.onnx", "net-dynamo.onnx", "net-opset17-onnxsim.onnx", "net.pt", "threads.onnx"} <= set(got["warm"])
    threads = np.load(tmp_path / "warm" / "threads.inputs.npz")["in0"].flat[0]
    assert threads == torch.get_num_threads()
