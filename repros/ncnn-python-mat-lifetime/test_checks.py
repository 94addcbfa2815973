from kb.checks import Checks

checks = Checks(__file__)


def feed(param: str, bin: str, inputs: str, out: str, how: str) -> None:
    """Runs in a child process (imported from this file): feed the input to ncnn the way `how` says, as a
    user's script does, and save what extract() returns."""
    import sys

    import ncnn
    import numpy as np

    from kb.workers.ncnn import load

    net = load(param, bin)
    with np.load(inputs) as z:
        x = z["in0"][0]  # [3, 16, 16] float32: pnnx's script feeds in0.squeeze(0)
    keep = []
    if how == "temporary":
        # float64 data (np math, cv2 arithmetic), made float32 inside the call: that array is freed when
        # Mat() returns, and the program goes on allocating before extract().
        x64 = x.astype(np.float64)
        mat = ncnn.Mat(x64.astype(np.float32))
        keep += [np.full(x.shape, 7.0, dtype=np.float32) for _ in range(3)]
    elif how == "transposed-view":
        # An HWC image made CHW with transpose(): a non-contiguous view of the same values. clone()
        # copies what Mat() read, which is already wrong.
        hwc = np.ascontiguousarray(x.transpose(1, 2, 0))
        view = hwc.transpose(2, 0, 1)
        assert np.array_equal(view, x) and not view.flags["C_CONTIGUOUS"]
        mat = ncnn.Mat(view).clone()
        keep.append(hwc)
    elif how == "contiguous-clone":
        arr = np.ascontiguousarray(x, dtype=np.float32)  # held until extract() has returned
        mat = ncnn.Mat(arr).clone()  # memory ncnn owns
        keep.append(arr)
    else:
        raise ValueError(how)
    ex = net.create_extractor()
    if ex.input("in0", mat) != 0:
        sys.exit("ncnn: input in0 failed")
    ret, got = ex.extract("out0")
    if ret != 0:
        sys.exit(f"ncnn: extract out0 failed with {ret}")
    np.savez(out, out0=np.array(got, dtype=np.float32, copy=True)[None])
    print(f"ncnn {how}: output {list(np.array(got).shape)} from an input of {list(x.shape)}")


def via_python(s, case: str, how: str):
    """pnnx converts the traced model; a child process then runs ncnn's Python API as `feed(how)` does."""
    param, bin = s.pnnx.convert(s.artifacts.torchscript(case), case)
    return s.ncnn.feed(param, bin, case, how, shown=f"ncnn.Mat(...) fed as {how!r}, then extract('out0')")


# atol 1e-3 throughout: pnnx writes the weights as fp16 by default, 4.3e-4 from torch when fed right.
@checks.bug("ncnn", ["garbage-input"], needs=["pnnx"], atol=1e-3)
def temporary_array(s):
    """ncnn.Mat(x.astype(np.float32)): the temporary array is freed before extract() reads it."""
    return via_python(s, "conv-relu", "temporary")


@checks.bug("ncnn", ["garbage-input"], needs=["pnnx"], atol=1e-3)
def transposed_view(s):
    """ncnn.Mat(hwc.transpose(2, 0, 1)).clone(): the view's strides are ignored."""
    return via_python(s, "conv-relu", "transposed-view")


@checks.workaround("ncnn", "contiguous-clone", needs=["pnnx"], atol=1e-3)
def contiguous_clone(s):
    """arr = np.ascontiguousarray(x, dtype=np.float32), kept alive; ncnn.Mat(arr).clone()."""
    return via_python(s, "conv-relu", "contiguous-clone")
