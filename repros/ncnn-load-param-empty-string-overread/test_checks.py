"""KB227: a .param in which one layer gives a key a quoted string of 16 characters or more and a later layer
gives the same key a value that is only an opening quote ("), loaded under valgrind by a program that checks
load_param's return value and, where ncnn refuses the file, goes on with a right one.

ncnn reuses one ParamDict for every layer of the file, and a std::string keeps its heap buffer when a shorter
value is assigned; the lone quote leaves that string empty, and the releases that read quoted strings then look
at the byte before its buffer. Nothing a user sees changes (load_param returns 0, the output is right): valgrind
(or AddressSanitizer, as in Tencent/ncnn#6915) is what shows the read."""

import shutil
import sys
from pathlib import Path

from kb import child
from kb.checks import Checks
from kb.engines.base import Unavailable
from kb.compare import Outputs

checks = Checks(__file__)

NOTE = '"converted-by-hand-2026"'  # 24 characters: longer than std::string's 15-character inline buffer

LAYERS = {
    "right": ("", ""),  # the file the program goes on with where ncnn refuses one
    # the thread's kind of value: a lone quote, after a long string at the same key of an earlier layer
    "lone-quote-after-long-string": (f"1={NOTE}", '1="'),
    # both on one line: the key given twice, the long string first
    "lone-quote-same-line": ("", f'1={NOTE} 1="'),
    # control: the same long string, then a closed short one
    "closed-strings": (f"1={NOTE}", '1="x"'),
}

# valgrind's memcheck with its uninitialised-value reports off (Python's own start-up prints many): it reports
# reads and writes outside a block, and then exits 99. valgrind.supp silences the dynamic loader's known one.
VALGRIND = ["valgrind", "-q", "--undef-value-errors=no", "--error-exitcode=99",
            f"--suppressions={Path(__file__).with_name('valgrind.supp')}"]


def text(layers: str) -> str:
    relu, sigmoid = LAYERS[layers]
    return ("7767517\n3 3\n"
            "Input            in0                      0 1 in0\n"
            f"ReLU             relu0                    1 1 in0 r0 {relu}\n"
            f"Sigmoid          sigmoid0                 1 1 r0 out0 {sigmoid}\n")


def string_problems(param_text: str) -> list[str]:
    """Every key=value token of the layer lines whose value opens a quote it does not close ("abc, or a lone ")."""
    problems = []
    for n, line in enumerate(param_text.splitlines()[2:], start=3):
        for token in line.split()[4:]:
            key, _, value = token.partition("=")
            if value.startswith('"') and (len(value) < 2 or not value.endswith('"')):
                problems.append(f"line {n}: {key}={value} opens a string it does not close")
    return problems


def feed(param: str, bin: str, inputs: str, out: str, how: str) -> None:
    """Runs in a child process (under valgrind), as the user's program: write the .param `how` names, load it,
    and where ncnn refuses it (load_param != 0) go on with the right .param. `how` = "check:<layers>": the
    program runs string_problems() first and hands ncnn the file only if it finds none. A refused Net is kept,
    never released: on the releases before 1.0.20260114, releasing it is KB161's crash, not this read."""
    import ncnn
    import numpy as np

    from kb.workers.ncnn import load

    first, _, layers = how.rpartition(":")
    edited = Path(out).with_name(f"{layers}.param")
    edited.write_text(text(layers))
    refused = []
    problems = string_problems(edited.read_text()) if first == "check" else []
    if problems:
        print(f"{edited.name}: not loaded: {'; '.join(problems)}", flush=True)
        net = load(param, None)
    else:
        net = ncnn.Net()
        net.opt.use_vulkan_compute = False
        ret = net.load_param(str(edited))
        print(f"ncnn: load_param({edited.name}) returned {ret}", flush=True)
        if ret != 0:
            refused.append(net)  # kept: see above
            print("ncnn: going on with the right .param", flush=True)
            net = load(param, None)
    with np.load(inputs) as z:
        x = np.ascontiguousarray(z["in0"][0], dtype=np.float32)  # a classic .param: no batch axis
    ex = net.create_extractor()
    mat = ncnn.Mat(x).clone()
    if ex.input("in0", mat) != 0:
        sys.exit("ncnn: input in0 failed")
    ret, got = ex.extract("out0")
    if ret != 0:
        sys.exit(f"ncnn: extract out0 failed with {ret}")
    np.savez(out, out0=np.array(got, dtype=np.float32, copy=True)[None])
    del ex, net
    sys.stdout.flush()
    import os

    os._exit(0)  # the refused Net is never released; valgrind's exit code still reports what it found


def loaded(s, how: str):
    """The right .param written beside; a child runs the user's program, feed(how), under valgrind (memcheck,
    uninitialised-value reports off: only reads and writes outside a block, which make it exit 99)."""
    if shutil.which("valgrind") is None:
        raise Unavailable("valgrind is not installed (apt-get install valgrind)")
    right = s.ncnn.write_param("relu-sigmoid.param", text("right"))
    out = s.path(f"relu-sigmoid-{how.replace(':', '-')}.npz")
    s.step(child.run_function(f"ncnn feed {how} under valgrind", "test_checks:feed", cwd=s.entry.dir,
                              python=[*VALGRIND, sys.executable], env={"PYTHONMALLOC": "malloc"},
                              param=str(right), bin=str(right), inputs=str(s.artifacts.inputs("relu-sigmoid")),
                              out=str(out), how=how), produces=[out])
    return Outputs.load("relu-sigmoid", out, f"ncnn {s.ncnn.version()} under valgrind")


@checks.bug("ncnn", ["empty-string-overread"])
def lone_quote_after_long_string(s):
    """ReLU's key 1 holds a 24-character quoted string; the Sigmoid's key 1 is a lone `"`."""
    return loaded(s, "lone-quote-after-long-string")


@checks.bug("ncnn", ["empty-string-overread"])
def lone_quote_same_line(s):
    """The Sigmoid's line gives key 1 the 24-character string, then a lone `"`."""
    return loaded(s, "lone-quote-same-line")


@checks.control("ncnn")
def closed_strings(s):
    """Control: the same long string on the ReLU, a closed `"x"` on the Sigmoid: loads and matches torch."""
    return loaded(s, "closed-strings")


@checks.workaround("ncnn", "check-strings-first")
def check_first_lone_quote_after_long_string(s):
    """The first bug check's file, run through string_problems() before ncnn is handed it."""
    return loaded(s, "check:lone-quote-after-long-string")

