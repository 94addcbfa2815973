"""ncnn, inside a child process (see kb.child): no kb imports beyond the standard library."""

from __future__ import annotations

from pathlib import Path


def run(param: str, bin: str | None, feed: str, out: str, batch: bool, blobs_in: list[str],
        blobs_out: dict[str, str]) -> None:
    import sys

    import ncnn
    import numpy as np

    net = ncnn.Net()
    net.opt.use_vulkan_compute = False
    if net.load_param(param) != 0:
        sys.exit(f"ncnn: load_param failed for {Path(param).name}")
    if bin and net.load_model(bin) != 0:
        sys.exit(f"ncnn: load_model failed for {Path(bin).name}")
    with np.load(feed) as z:
        arrays = [z[k] for k in z.files]
    ex = net.create_extractor()
    for blob, arr in zip(blobs_in, arrays):
        arr = arr[0] if not batch and arr.ndim > 1 and arr.shape[0] == 1 else arr
        ex.input(blob, ncnn.Mat(np.ascontiguousarray(arr, dtype=np.float32)))
    result = {}
    for blob, name in blobs_out.items():
        ret, mat = ex.extract(blob)
        if ret != 0:
            sys.exit(f"ncnn: extract {blob!r} failed with {ret}")
        result[name] = np.array(mat)[None]
    np.savez(out, **result)
