"""kb locate, inside a child process (see kb.child): no kb imports beyond the standard library.

Each function reads and writes files only. Arrays go to an .npz under positional keys (t0, t1, ...) with the
tensor names in a JSON file beside it: ONNX tensor names hold '/', ':' and '.', which are not safe as keys.
A tensor that cannot be read is listed in the JSON's "failed" with why, never fatal.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _save(out: str, arrays: dict, failed: dict[str, str] | None = None) -> None:
    import numpy as np

    names = list(arrays)
    np.savez(out, **{f"t{i}": arrays[n] for i, n in enumerate(names)})
    Path(out).with_suffix(".json").write_text(json.dumps({"names": names, "failed": failed or {}}))


def _feed(feed: str) -> dict:
    import numpy as np

    with np.load(feed) as z:
        return {k: z[k] for k in z.files}


def onnxruntime(model: str, feed: str, out: str, outputs: list[str]) -> None:
    """Run `model` (whose graph outputs already list every tensor wanted) and save `outputs`."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # the graph as written
    opts.log_severity_level = 3
    sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    wanted = {i.name for i in sess.get_inputs()}
    values = sess.run(outputs, {k: v for k, v in _feed(feed).items() if k in wanted})
    _save(out, dict(zip(outputs, values)))


def mnn_names(model: str, out: str) -> None:
    """The tensor names a converted .mnn keeps (MNN.expr.load_as_dict), as a JSON list."""
    import MNN.expr as F

    Path(out).write_text(json.dumps(sorted(F.load_as_dict(model))))


def mnn_run(model: str, feed: str, out: str, inputs: list[str], outputs: list[str]) -> None:
    """The Module API with `outputs` (graph outputs and intermediate tensors alike), fed `inputs` from `feed`."""
    import MNN.expr as F
    import numpy as np
    from MNN import nn

    arrays = _feed(feed)
    net = nn.load_module_from_file(model, inputs, outputs)
    xs = []
    for name in inputs:
        a = arrays[name]
        if a.dtype.kind in "iub":
            xs.append(F.const(a.astype(np.int32).flatten().tolist(), list(a.shape), F.NCHW, F.int))
        else:
            xs.append(F.const(a.astype(np.float32).flatten().tolist(), list(a.shape), F.NCHW))
    ys = net.forward(xs)  # a list: a single Var argument can crash MNN
    if len(ys) != len(outputs):
        sys.exit(f"MNN forward returned {len(ys)} outputs, expected {len(outputs)}")
    got, failed = {}, {}
    for name, y in zip(outputs, ys):
        try:
            got[name] = np.array(F.convert(y, F.NCHW).read())
        except Exception as e:  # noqa: BLE001 -- one unreadable tensor must not lose the others
            failed[name] = f"{type(e).__name__}: {e}"
    _save(out, got, failed)


def ncnn_blobs(param: str, bin: str, feed: str, out: str, blobs_in: dict[str, str], axes_in: dict[str, object],
               blobs_out: list[str]) -> None:
    """Load a .param/.bin, feed blobs_in {blob: feed key}, extract every blob of blobs_out (in order).

    As kb.workers.ncnn: inputs are float32 arrays we hold, cloned into memory ncnn owns, alive until the last
    extract; a failed load stops before any extract (extract on such a net segfaults). axes_in: per blob,
    "leading" (drop a leading 1, as onnx2ncnn's models expect), None (as it is) or pnnx's batch axis."""
    import ncnn
    import numpy as np

    net = ncnn.Net()
    net.opt.use_vulkan_compute = False
    if net.load_param(param) != 0:
        sys.exit("ncnn: load_param failed")
    if net.load_model(bin) != 0:
        sys.exit("ncnn: load_model failed")
    arrays = _feed(feed)
    alive, fed = [], []
    for blob, key in blobs_in.items():
        a = arrays[key]
        a = np.ascontiguousarray(as_fed(a, axes_in.get(blob, "leading")), dtype=np.float32)
        mat = ncnn.Mat(a).clone()
        alive += [a, mat]
        fed.append((blob, mat))
    ex = net.create_extractor()
    for blob, mat in fed:
        if ex.input(blob, mat) != 0:
            sys.exit(f"ncnn: input {blob!r} is not a blob of the model")
    got, failed = {}, {}
    for blob in blobs_out:
        ret, mat = ex.extract(blob)
        if ret != 0:
            failed[blob] = f"extract returned {ret}"
            continue
        got[blob] = np.array(mat, dtype=np.float32, copy=True)  # copied before the next layer may reuse it
    del ex
    alive.clear()
    _save(out, got, failed)


def as_fed(a, axis):
    """An input as the model's own script feeds it: "leading" drops a leading 1 (onnx2ncnn's models); an int is
    pnnx's batch axis, squeezed as torch's squeeze(k) does, so only where it is 1 (its script feeds the array as it
    is otherwise); None leaves it."""
    if axis == "leading":
        return a[0] if a.ndim > 1 and a.shape[0] == 1 else a
    if axis is not None and a.shape[int(axis)] == 1:
        return a.squeeze(int(axis))
    return a
