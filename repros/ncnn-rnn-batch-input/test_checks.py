from kb.checks import Checks

checks = Checks(__file__)


def feed(param: str, bin: str, inputs: str, out: str, how: str) -> None:
    """Runs in a child process (imported from this file): feed the (2, T, F) input to ncnn as `how` says and
    save the (2, T, H) output.

    one-at-a-time: each sample as a 2-D (T, F) Mat, one extractor each, outputs stacked (any ncnn);
    batch-index: ncnn.Mat(x, batch_index=0) and out.numpy(batch_index=0), the batch axis of ncnn's Python
    API from 1.0.20261020 (an older ncnn has no such argument: TypeError)."""
    import sys

    import ncnn
    import numpy as np

    from kb.workers.ncnn import load

    net = load(param, bin)
    with np.load(inputs) as z:
        x = np.ascontiguousarray(z["in0"], dtype=np.float32)
    if how == "one-at-a-time":
        outs = []
        for sample in x:
            arr = np.ascontiguousarray(sample)  # held until extract() has returned
            ex = net.create_extractor()
            ex.input("in0", ncnn.Mat(arr).clone())
            ret, got = ex.extract("out0")
            if ret != 0:
                sys.exit(f"ncnn: extract out0 failed with {ret}")
            outs.append(np.array(got, dtype=np.float32, copy=True))
        y = np.stack(outs)
    elif how == "batch-index":
        ex = net.create_extractor()
        ex.input("in0", ncnn.Mat(x, batch_index=0).clone())
        ret, got = ex.extract("out0")
        if ret != 0:
            sys.exit(f"ncnn: extract out0 failed with {ret}")
        y = np.array(got.numpy(batch_index=0), dtype=np.float32, copy=True)
    else:
        raise ValueError(how)
    np.savez(out, out0=y)
    print(f"ncnn {how}: output {list(y.shape)} from an input of {list(x.shape)}")


def fed(s, case: str, how: str):
    """onnx2ncnn converts the case; a child process then runs ncnn's Python API as `feed(how)` does."""
    param, bin = s.onnx2ncnn.convert(s.artifacts.onnx(case))
    return s.ncnn.feed(param, bin, case, how, shown=f"ncnn.Mat(...) fed {how!r}, then extract('out0')")


@checks.workaround("ncnn", "one-at-a-time", needs=["onnx2ncnn"])
def ncnn_one_at_a_time(s):
    """Each sample of the batch as its own 2-D Mat and extractor; the outputs stacked."""
    return fed(s, "lstm-batch2", "one-at-a-time")


@checks.workaround("ncnn", "batch-index", needs=["onnx2ncnn"])
def ncnn_batch_index(s):
    """ncnn.Mat(x, batch_index=0) in, out.numpy(batch_index=0) out (ncnn's batch axis, 1.0.20261020 on)."""
    return fed(s, "lstm-batch2", "batch-index")
