"""KB181: a .param whose header (line 2: layer count, blob count) declares fewer blobs than its layers write,
loaded by a program that checks load_param's return value and, where ncnn refuses the file, goes on with a
right one."""

from kb.checks import Checks

checks = Checks(__file__)

LAYERS = """Input            in0                      0 1 in0
ReLU             relu0                    1 1 in0 r0
Sigmoid          sigmoid0                 1 1 r0 out0
"""
# The header's counts: 3 layers, 3 blobs (in0, r0, out0). Each edit is a header a user leaves behind.
HEADERS = {
    "right": "3 3",
    "one-blob-short": "3 2",  # a Sigmoid appended by hand: the layer count raised, the blob count not
    "one-blob-declared": "3 1",  # the header of the Tencent/ncnn#6913 draw (1 blob for layers that write 3)
}


def text(header: str) -> str:
    return f"7767517\n{HEADERS[header]}\n{LAYERS}"


def recount(param_text: str) -> str:
    """The header computed again from the layer lines: the layer count, and the number of distinct blobs the
    layers write or read (ncnn names each blob once, by its name)."""
    lines = param_text.splitlines()
    layers = [line.split() for line in lines[2:] if line.strip()]
    blobs = []
    for f in layers:
        bottoms, tops = int(f[2]), int(f[3])
        for name in f[4:4 + bottoms + tops]:
            if name not in blobs:
                blobs.append(name)
    return "\n".join([lines[0], f"{len(layers)} {len(blobs)}", *lines[2:]]) + "\n"


def feed(param: str, bin: str, inputs: str, out: str, how: str) -> None:
    """Runs in a child process, as the user's program: write the .param with header `how`, load it, and where
    ncnn refuses it (load_param != 0), release that Net and go on with the right .param. Nothing is run on a
    Net whose load_param failed. `how` = "recount:<header>": the program writes the header again from the
    layer lines (recount()) before ncnn reads the file."""
    from pathlib import Path

    import ncnn

    from kb.workers.ncnn import LEADING, infer, load

    fix, _, header = how.rpartition(":")
    edited = Path(out).with_name(f"{header}.param")
    edited.write_text(recount(text(header)) if fix else text(header))
    print(f"{edited.name}: header {edited.read_text().splitlines()[1]!r}; ncnn: load_param", flush=True)
    net = ncnn.Net()
    net.opt.use_vulkan_compute = False
    ret = net.load_param(str(edited))
    print(f"ncnn: load_param({edited.name}) returned {ret}", flush=True)
    if ret != 0:
        del net  # the refused Net is released
        print("ncnn: the refused Net was released; going on with the right .param", flush=True)
        net = load(param, None)
    infer(net, inputs, out, ["in0"], {"out0": "out0"}, [LEADING], [LEADING])  # a classic .param: no batch axis


def loaded(s, how: str):
    """The right .param written beside; a child runs the user's program, feed(how)."""
    right = s.ncnn.write_param("relu-sigmoid.param", text("right"))
    fix, _, header = how.rpartition(":")
    shown = f"the .param with header {HEADERS[header]!r}" + (", recounted" if fix else "") + ": load_param, then the right .param"
    return s.ncnn.feed(right, right, "relu-sigmoid", how, shown=shown)


@checks.bug("ncnn", ["load-param-sigsegv", "too-many-blobs"])
def one_blob_short(s):
    """Header `3 2` for layers that write 3 blobs (a Sigmoid appended, the blob count not raised)."""
    return loaded(s, "one-blob-short")


@checks.bug("ncnn", ["load-param-sigsegv", "too-many-blobs"])
def one_blob_declared(s):
    """Header `3 1` for the same layers."""
    return loaded(s, "one-blob-declared")


@checks.control("ncnn")
def right_header(s):
    """Control: header `3 3`: loads and matches torch."""
    return loaded(s, "right")


@checks.workaround("ncnn", "recount-header")
def recount_one_blob_short(s):
    """The `3 2` file with its header written again from the layer lines before load_param."""
    return loaded(s, "recount:one-blob-short")


@checks.workaround("ncnn", "recount-header")
def recount_one_blob_declared(s):
    """The `3 1` file, recounted."""
    return loaded(s, "recount:one-blob-declared")
