"""KB209: Tencent/ncnn#5880's reading of the constant outputs: the program takes the MemoryData blobs' data as
int32, as the thread's C++ does (int* p = out), rather than as float32."""

from kb.checks import Checks

checks = Checks(__file__)


def feed(param: str, bin: str, inputs: str, out: str, how: str) -> None:
    """Runs in a child, as the user's program: load the pnnx .param/.bin, feed in0, extract out0 (x + 1, float)
    and out1 (the integer constant), and read out1's data as int32 (`how` = "int32")."""
    import sys

    import ncnn
    import numpy as np

    from kb.workers.ncnn import load

    net = load(param, bin)
    with np.load(inputs) as z:
        x = np.ascontiguousarray(z["in0"], dtype=np.float32)
    ex = net.create_extractor()
    if ex.input("in0", ncnn.Mat(x).clone()) != 0:
        sys.exit("ncnn: input in0 failed")
    got = {}
    for blob in ("out0", "out1"):
        ret, mat = ex.extract(blob)
        if ret != 0:
            sys.exit(f"ncnn: extract {blob} failed with {ret}")
        got[blob] = np.array(mat, dtype=np.float32, copy=True)
    if how == "int32":
        got["out1"] = got["out1"].view(np.int32).astype(np.float32)
    print(f"ncnn: out1 read as {how}: {got['out1'].tolist()}", flush=True)
    np.savez(out, **got)
    del ex


@checks.bug("pnnx", ["int32-words"], needs=["ncnn"])
def int64_output_as_int32(s):
    """Tencent/ncnn#5880's module (x + 1 and an int64 constant [2, 1, 3, 4]) traced, pnnx with fp16=0, then ncnn;
    the constant's blob read as int32."""
    param, bin = s.pnnx.convert(s.artifacts.torchscript("int64-output"), "int64-output", fp16=False)
    return s.ncnn.feed(param, bin, "int64-output", "int32", shown="out1 read as int32, as the thread's C++ does")
