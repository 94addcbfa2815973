"""KB232's user program, run in a child (test_checks.py).

loop() runs under valgrind and imports ncnn and the standard library only: numpy alone costs seconds to import
there. As in Tencent/ncnn#4981 it runs one Net on the same input `runs` times, a new Extractor each time, the input
copied into memory ncnn owns, with ncnn's default options (lightmode on) or opt.lightmode = False.

nan_before() runs as it is: the input is a view into the caller's own float32 buffer whose 16 floats before it are
NaN, handed to ncnn without a copy (ncnn.Mat(view)); a layer that reads only its input never sees them."""

import array
import os
import struct
import sys
import zipfile


def save_npz(out: str, name: str, shape: list[int], data: bytes) -> None:
    """np.savez of one float32 array, written with the standard library (the .npy format, version 1.0)."""
    header = f"{{'descr': '<f4', 'fortran_order': False, 'shape': ({', '.join(map(str, shape))},), }}"
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    npy = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data
    with zipfile.ZipFile(out, "w") as z:
        z.writestr(f"{name}.npy", npy)


def loop(param: str, bin: str, raw: str, shape: list[int], out: str, runs: int, lightmode: bool) -> None:
    import ncnn

    net = ncnn.Net()
    net.opt.use_vulkan_compute = False
    net.opt.lightmode = lightmode
    if net.load_param(param) != 0 or net.load_model(bin) != 0:
        sys.exit("ncnn: load failed")
    data = array.array("f")
    with open(raw, "rb") as f:
        data.frombytes(f.read())
    c, h, w = shape  # the input without its batch axis, as ncnn's blobs are
    worst, worst_nan = None, -1
    for i in range(runs):
        ex = net.create_extractor()
        ex.input("in0", ncnn.Mat(data).reshape(w, h, c).clone())
        ret, got = ex.extract("out0")
        if ret != 0:
            sys.exit(f"ncnn: extract out0 failed with {ret}")
        dims = [got.c, got.h, got.w]
        y = array.array("f", memoryview(got.reshape(got.w * got.h * got.c)).tobytes())
        nan = sum(1 for v in y if v != v)
        print(f"ncnn run {i + 1} of {runs}: {nan} NaN of {len(y)}", flush=True)
        if nan > worst_nan:
            worst, worst_nan = (dims, y.tobytes()), nan
        del ex
    save_npz(out, "out0", [1, *worst[0]], worst[1])
    sys.stdout.flush()
    os._exit(0)


def nan_before(param: str, bin: str, inputs: str, out: str) -> None:
    import ncnn
    import numpy as np

    from kb.workers.ncnn import load

    net = load(param, bin)
    with np.load(inputs) as z:
        x = np.ascontiguousarray(z["in0"][0], dtype=np.float32)  # ncnn's blobs have no batch axis
    buf = np.full(x.size + 16, np.nan, dtype=np.float32)
    view = buf[16:].reshape(x.shape)
    view[...] = x
    ex = net.create_extractor()
    ex.input("in0", ncnn.Mat(view))  # no clone(): ncnn reads the caller's buffer, which stays alive
    ret, got = ex.extract("out0")
    if ret != 0:
        sys.exit(f"ncnn: extract out0 failed with {ret}")
    y = np.array(got, dtype=np.float32, copy=True)
    assert np.isnan(buf[:16]).all() and not np.isnan(view).any()
    print(f"ncnn: input after 16 NaN floats: {int(np.isnan(y).sum())} NaN of {y.size} in out0", flush=True)
    np.savez(out, out0=y[None])
