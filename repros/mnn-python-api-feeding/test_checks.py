from pathlib import Path

from kb import child
from kb.checks import Checks
from kb.compare import Outputs

checks = Checks(__file__)
FEED = Path(__file__).resolve().parent / "feed.py"


def feed(s, case: str, mode: str) -> Outputs:
    """Convert `case`, then run feed.py in a child (runpy) with MODE: the user's own Python API code."""
    model = s.mnn.convert(case)
    out = s.path(f"{case}.{mode}.npz")
    meta = s.artifacts.case(case)
    glb = {"MODEL": str(model), "FEED": str(s.artifacts.inputs(case)), "OUT": str(out),
           "OUTPUTS": meta["outputs"], "MODE": mode}
    s.step(child.run_function(f"MNN {mode} {model.name}", "runpy:run_path", path_name=str(FEED), init_globals=glb,
                              shown=f"python feed.py  # MODE={mode}, MNN Python API on {model.name}"),
           produces=[out])
    return Outputs.load(case, out, f"MNN {s.mnn.version()} ({mode})")


@checks.bug("mnn", ["layout-mismatch"])
def session_nhwc_as_caffe(s):
    """Session API: an NHWC image wrapped as MNN.Tensor(nchw_shape, Float, data, Tensor_DimensionType_Caffe), copyFrom."""
    return feed(s, "conv", "session-nhwc-as-caffe")


@checks.bug("mnn", ["layout-mismatch"])
def module_nhwc_as_nchw(s):
    """Module API: the NHWC image given to F.const with the NCHW shape and F.NCHW."""
    return feed(s, "conv", "module-nhwc-as-nchw")


@checks.workaround("mnn", "declare-the-layout")
def session_nhwc_as_tensorflow(s):
    """The same NHWC bytes declared Tensor_DimensionType_Tensorflow with their NHWC shape: copyFrom converts."""
    return feed(s, "conv", "session-nhwc-as-tensorflow")


@checks.workaround("mnn", "declare-the-layout")
def module_nhwc_converted(s):
    """Module API: F.const(nhwc, nhwc_shape, F.NHWC), then F.convert(..., F.NCHW)."""
    return feed(s, "conv", "module-nhwc-converted")


@checks.workaround("mnn", "transpose-in-numpy")
def session_transposed(s):
    """The NHWC array transposed to NCHW in numpy (a non-contiguous view), declared Caffe: MNN reads it right."""
    return feed(s, "conv", "session-transposed")
