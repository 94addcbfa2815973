"""KB228: a .param in which one layer gives a key a quoted string of 16 characters or more and a later layer
gives the same key a value that is only an opening quote ("), loaded under valgrind by a program that checks
load_param's return value and, where ncnn refuses the file, goes on with a right one.

ncnn reuses one ParamDict for every layer of the file, and a std::string keeps its heap buffer when a shorter
value is assigned; the lone quote leaves that string empty, and the releases that read quoted strings then look
at the byte before its buffer. Nothing a user sees changes (load_param returns 0, the output is right): valgrind
(or AddressSanitizer, as in Tencent/ncnn#6915) is what shows the read."""

import importlib.util
from pathlib import Path

from kb import child
from kb.checks import Checks
from kb.compare import Outputs

checks = Checks(__file__)
# the user's program (.param texts, the workaround's check, the program run under valgrind) is a module of its own:
# the child imports it alone, with ncnn and numpy only (each module imported under valgrind costs seconds)
_spec = importlib.util.spec_from_file_location("kb228_user_program", Path(__file__).with_name("user_program.py"))
program = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(program)



def loaded(s, how: str):
    """The right .param written beside; a child runs the user's program, feed(how), under valgrind (memcheck,
    uninitialised-value reports off: only reads and writes outside a block, which make it exit 99)."""
    memcheck = child.under_memcheck("ncnn", "numpy")  # a warm valgrind Python forks each run
    right = s.ncnn.write_param("relu-sigmoid.param", program.text("right"))
    out = s.path(f"relu-sigmoid-{how.replace(':', '-')}.npz")
    s.step(child.run_function(f"ncnn feed {how} under valgrind", "user_program:feed", cwd=s.entry.dir,
                              **memcheck,
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

