from kb.checks import Checks

checks = Checks(__file__)


def feed(param: str, bin: str, inputs: str, out: str, how: str) -> None:
    """Runs in a child process (imported from this file): load the .param, feed in0 as pnnx's script does (the
    batch axis dropped), and read the outputs the way `how` says; save them by position, as out0, out1, ..."""
    import ncnn
    import numpy as np

    from kb.workers.ncnn import load

    net = load(param, bin)
    with np.load(inputs) as z:
        x = np.ascontiguousarray(z["in0"][0], dtype=np.float32)
    listed = list(net.output_names())
    if how == "output-names":  # the order ncnn lists them in
        names = listed
    elif how == "sorted":  # Ultralytics' fix since pnnx/pnnx#130
        names = sorted(listed)
    elif how == "by-name":  # as pnnx's own *_ncnn.py reads them: out0, out1, ...
        names = [f"out{i}" for i in range(len(listed))]
    else:
        raise ValueError(how)
    ex = net.create_extractor()
    ex.input(net.input_names()[0], ncnn.Mat(x).clone())
    got = {}
    for i, name in enumerate(names):
        ret, mat = ex.extract(name)
        if ret != 0:
            raise SystemExit(f"ncnn: extract {name} failed with {ret}")
        got[f"out{i}"] = np.array(mat, dtype=np.float32, copy=True)[None]
    np.savez(out, **got)
    print(f"ncnn output_names(): {listed}; read as {how}: {names}")


SHOWN = {"output-names": "[ex.extract(n)[1] for n in net.output_names()]",
         "sorted": "[ex.extract(n)[1] for n in sorted(net.output_names())]",
         "by-name": "[ex.extract(f'out{i}')[1] for i in range(len(net.output_names()))]"}


def read(s, case: str, how: str):
    """pnnx converts the traced model; a child process runs it with ncnn's Python API and reads the outputs as
    `feed(how)` does, each one compared with torch's output of the same position."""
    param, bin = s.pnnx.convert(s.artifacts.torchscript(case), case)
    return s.ncnn.feed(param, bin, case, how, shown=SHOWN[how])


# atol 1e-3: pnnx writes the weights as fp16 by default.
@checks.bug("pnnx", ["swapped-shape", "swapped-values"], needs=["ncnn"], atol=1e-3)
def output_names_order(s):
    """The outputs read in Net.output_names() order."""
    return read(s, "proto-first", "output-names")


@checks.workaround("pnnx", "by-name", needs=["ncnn"], atol=1e-3)
def by_name(s):
    """The outputs extracted by their names, out0, out1, as pnnx's *_ncnn.py does."""
    return read(s, "proto-first", "by-name")


@checks.workaround("pnnx", "sorted-names", needs=["ncnn"], atol=1e-3)
def sorted_names(s):
    """The outputs read in sorted(Net.output_names()) order, Ultralytics' fix."""
    return read(s, "proto-first", "sorted")


@checks.workaround("pnnx", "sorted-names", needs=["ncnn"], atol=1e-3)
def sorted_twelve(s):
    """Twelve outputs read in sorted(Net.output_names()) order: a string sort."""
    return read(s, "twelve-outputs", "sorted")


@checks.variants("pnnx", ["swapped-shape", "swapped-values"], needs=["ncnn"], atol=1e-3)
def variant(s, case):
    """The outputs read in Net.output_names() order."""
    return read(s, case, "output-names")
