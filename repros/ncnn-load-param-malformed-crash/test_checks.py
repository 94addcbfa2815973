"""KB161: a pnnx .param edited by hand into text ncnn cannot parse, loaded by a program that checks load_param."""

from kb.checks import Checks

checks = Checks(__file__)

# What pnnx writes on the Slice line of conv-chunk, and what a hand edit leaves there instead.
EDITS = {
    "key-not-a-number": ("1=0", "axis=0"),  # the split axis, its key written as a word
    "array-without-count": ("-23300=2,-233,-233", "-23300=4,4"),  # the split sizes, the leading count left out
    "spaces-around-equals": ("-23300=2,-233,-233 1=0", "-23300=2,-233,-233 1 = 0"),  # key = value, spaced
}


def edit(text: str, how: str) -> str:
    """pnnx's .param with one edit on its Slice line."""
    old, new = EDITS[how]
    lines = text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("Slice") and old in line)
    lines[at] = lines[at].replace(old, new, 1)
    return "".join(lines)


def param_problems(text: str) -> list[str]:
    """A check of the .param's text before ncnn reads it: every key=value is numbers, an array (key <= -23300)
    is its count, then that many values."""
    import re

    number = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
    lines = [line.split() for line in text.splitlines()]
    problems = [] if lines[:1] == [["7767517"]] else ["line 1 is not 7767517"]
    for n, f in enumerate(lines[2:], 3):
        if not f:
            continue
        if len(f) < 4 or not (f[2].isdigit() and f[3].isdigit()):
            problems.append(f"line {n}: no bottom and top counts")
            continue
        for token in f[4 + int(f[2]) + int(f[3]):]:
            key, eq, value = token.partition("=")
            if not (eq and re.fullmatch(r"-?\d+", key)):
                problems.append(f"line {n}: {token!r} is not key=value with a number as the key")
            elif int(key) <= -23300:
                count, *items = value.split(",")
                if not (count.isdigit() and int(count) == len(items) and all(number.fullmatch(v) for v in items)):
                    problems.append(f"line {n}: {token!r} is not an array (its count, then that many numbers)")
            elif not number.fullmatch(value):
                problems.append(f"line {n}: {token!r}: the value is not a number")
    return problems


def feed(param: str, bin: str, inputs: str, out: str, how: str) -> None:
    """Runs in a child process (imported from this file), as the user's program: write the edited .param,
    load it, and where ncnn refuses it (load_param != 0), release that Net and go on with the .param pnnx
    wrote. Nothing is run on a Net whose load_param failed. `how` = "check-first:<edit>": the program checks
    the edited text with param_problems() and hands ncnn only a .param it finds no problem in."""
    import sys
    from pathlib import Path

    import ncnn

    from kb.workers.ncnn import LEADING, infer, load

    check_first, _, edit_name = how.rpartition(":")
    text = Path(param).read_text()
    edited = Path(out).with_name(f"{edit_name}.param")
    edited.write_text(edit(text, edit_name))
    if check_first:
        if param_problems(text):
            sys.exit(f"param_problems() rejects the .param pnnx wrote: {param_problems(text)}")
        problems = param_problems(edited.read_text())
        print(f"param_problems({edited.name}): {problems}", flush=True)
    if check_first and problems:
        print("the edited .param is not loaded; going on with the .param pnnx wrote", flush=True)
    else:
        net = ncnn.Net()
        net.opt.use_vulkan_compute = False
        ret = net.load_param(str(edited))
        print(f"ncnn: load_param({edited.name}) returned {ret}", flush=True)
        if ret == 0:
            sys.exit("ncnn: the edited .param loaded; not run here (this check is about a refused one)")
        del net  # the refused Net is released (ncnn's Net::clear() runs here)
        print("ncnn: the refused Net was released; going on with the .param pnnx wrote", flush=True)
    net = load(param, bin)
    infer(net, inputs, out, ["in0"], {"out0": "out0"}, [LEADING], [LEADING])  # as pnnx's script: no batch axis in, added back out


def edited_load(s, how: str):
    """pnnx converts conv-chunk's traced model; a child then runs the user's program, feed(how)."""
    param, bin = s.pnnx.convert(s.artifacts.torchscript("conv-chunk"), "conv-chunk")
    first, _, edited = how.rpartition(":")
    shown = (f"the .param edited ({edited}); " + ("param_problems() on it, " if first else "load_param on it, ")
             + "then pnnx's own .param")
    return s.ncnn.feed(param, bin, "conv-chunk", how, shown=shown)


# atol 1e-3: pnnx writes the weights as fp16 by default.
@checks.bug("ncnn", ["crash-after-refused-load"], needs=["pnnx"], atol=1e-3)
def key_not_a_number(s):
    """The Slice's `1=0` edited to `axis=0`: load_param returns -1; releasing that Net is the step judged."""
    return edited_load(s, "key-not-a-number")


@checks.bug("ncnn", ["crash-after-refused-load"], needs=["pnnx"], atol=1e-3)
def array_without_count(s):
    """The Slice's `-23300=2,-233,-233` edited to `-23300=4,4` (its count left out)."""
    return edited_load(s, "array-without-count")


@checks.bug("ncnn", ["crash-after-refused-load"], needs=["pnnx"], atol=1e-3)
def spaces_around_equals(s):
    """The Slice's `1=0` edited to `1 = 0`."""
    return edited_load(s, "spaces-around-equals")


@checks.workaround("ncnn", "check-text-first", needs=["pnnx"], atol=1e-3)
def check_first_array_without_count(s):
    """The array edit, checked by param_problems() first: the program never hands it to ncnn."""
    return edited_load(s, "check-first:array-without-count")


@checks.workaround("ncnn", "check-text-first", needs=["pnnx"], atol=1e-3)
def check_first_key_not_a_number(s):
    """The key edit, checked by param_problems() first."""
    return edited_load(s, "check-first:key-not-a-number")
