"""KB228's user program, run under valgrind in a child (test_checks.py's `loaded`): it imports ncnn, numpy and
kb's ncnn worker (standard library only), nothing else: every module Python imports under valgrind costs seconds.
text() writes each .param, string_problems() is the workaround's check, feed() the program."""

import os
import sys
from pathlib import Path

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

    from kb.workers.ncnn import LEADING, infer, load

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
    infer(net, inputs, out, ["in0"], {"out0": "out0"}, [LEADING], [LEADING])  # a classic .param: no batch axis
    sys.stdout.flush()
    os._exit(0)  # the refused Net is never released; valgrind's exit code still reports what it found
