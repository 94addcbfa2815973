"""ncnn, inside a child process (see kb.child): no kb imports beyond the standard library.

ncnn's Python `Mat(array)` wraps the array's memory without owning it or keeping it alive. A Mat
made from a temporary (`Mat(np.ascontiguousarray(x, dtype=np.float32))` when x is float64 is a new
array, freed at once) is read after it is freed, and a first layer that works in place writes into
memory ncnn does not own and crashes. So every input is a float32 array we hold, copied into memory
ncnn owns (`.clone()`), and both live until the last `extract()` has been copied out.
"""

from __future__ import annotations

from pathlib import Path

NO_DEVICE = "ncnn: no Vulkan device here for use_vulkan_compute"

# How an input is fed / an output read, per blob (JSON-friendly, from kb.engines.ncnn):
LEADING = "leading"  # classic ncnn (onnx2ncnn, hand-written): a leading 1 is dropped / added back
# None: as it is; an int k: pnnx's batch axis k, squeezed on the way in and unsqueezed on the way out.


def _feedable(arr, axis):
    import numpy as np

    if axis == LEADING:
        return arr[0] if arr.ndim > 1 and arr.shape[0] == 1 else arr
    if axis is None:
        return arr
    if arr.shape[axis] != 1:
        raise ValueError(f"batch axis {axis} of shape {list(arr.shape)} is not 1; ncnn runs one sample at a time")
    return np.squeeze(arr, axis=axis)


def _read_back(arr, axis):
    import numpy as np

    if axis == LEADING:
        return arr[None]
    return arr if axis is None else np.expand_dims(arr, axis)


def load(param: str, bin: str | None, options: dict | None = None):
    """An ncnn.Net with `options` set and the model loaded, on the CPU unless options ask for Vulkan; one line and
    exit where it cannot be, since extract() on a net that failed to load segfaults. For hand-written feeds too."""
    import sys

    import ncnn

    net = ncnn.Net()
    net.opt.use_vulkan_compute = False
    # Options (use_fp16_storage, ...) act when the layers are created: set before load_param.
    for key, value in (options or {}).items():
        if not hasattr(net.opt, key):
            sys.exit(f"ncnn: no option {key!r} in this ncnn's Option")
        setattr(net.opt, key, value)
    if net.opt.use_vulkan_compute and ncnn.get_gpu_count() == 0:
        sys.exit(NO_DEVICE)  # ncnn would run on the CPU instead, and the check would judge the wrong device
    if net.load_param(param) != 0:
        sys.exit(f"ncnn: load_param failed for {Path(param).name}")
    if bin and net.load_model(bin) != 0:
        sys.exit(f"ncnn: load_model failed for {Path(bin).name}")
    return net


def run(param: str, bin: str | None, feed: str, out: str, blobs_in: list[str], blobs_out: dict[str, str],
        batch: bool = False, axes_in: list | None = None, axes_out: list | None = None,
        options: dict | None = None) -> None:
    """Feed blobs_in from the arrays in `feed` (in order), write blobs_out {blob: output name} to `out`.

    axes_in / axes_out: per blob, LEADING, None or a batch axis (see above). Without them, `batch`
    picks for every blob: False -> LEADING; True -> inputs as they are, outputs with a leading axis.
    """
    import ncnn

    if axes_in is None:
        axes_in = [None if batch else LEADING] * len(blobs_in)
    if axes_out is None:
        axes_out = [LEADING] * len(blobs_out)

    net = load(param, bin, options)
    gpu = bool(net.opt.use_vulkan_compute)
    infer(net, feed, out, blobs_in, blobs_out, axes_in, axes_out, Path(param).name)
    if gpu:  # before the interpreter unloads ncnn, or its Vulkan instance is torn down after the driver
        del net
        ncnn.destroy_gpu_instance()


def infer(net, feed: str, out: str, blobs_in: list[str], blobs_out: dict[str, str], axes_in: list, axes_out: list,
          model: str = "the model") -> None:
    """Run a loaded ncnn.Net: feed blobs_in from the arrays in `feed` (in order), write blobs_out {blob: output name}
    to `out`; per blob, LEADING, None or a batch axis. Also for an entry's own program that loads the Net its way."""
    import sys

    import ncnn
    import numpy as np

    with np.load(feed) as z:
        arrays = [z[k] for k in z.files]
    if len(arrays) < len(blobs_in):
        sys.exit(f"ncnn: {len(blobs_in)} input blobs but {len(arrays)} arrays in {Path(feed).name}")

    alive = []  # every array and Mat ncnn may read, held until the outputs are copied out
    fed = []
    for blob, arr, axis in zip(blobs_in, arrays, axes_in):
        try:
            arr = np.ascontiguousarray(_feedable(arr, axis), dtype=np.float32)
        except ValueError as e:
            sys.exit(f"ncnn: input {blob!r}: {e}")
        alive.append(arr)
        mat = ncnn.Mat(arr).clone()  # memory ncnn owns; `arr` stays alive anyway
        alive.append(mat)
        fed.append((blob, mat))

    ex = net.create_extractor()
    for blob, mat in fed:
        if ex.input(blob, mat) != 0:
            sys.exit(f"ncnn: input {blob!r} is not a blob of {model}")
    result = {}
    for (blob, name), axis in zip(blobs_out.items(), axes_out):
        ret, mat = ex.extract(blob)
        if ret != 0:
            sys.exit(f"ncnn: extract {blob!r} failed with {ret}")
        result[name] = _read_back(np.array(mat, dtype=np.float32, copy=True), axis)
    del ex
    alive.clear()
    np.savez(out, **result)
