"""A warm start for a native converter: pnnx spends 0.19 s of a 0.26 s conversion in libtorch's static
initializers, the same work every time. kb/zygote.c, preloaded into the converter, lets them run once, then forks
one child per step, which runs the converter's own main() with the step's argv and environment (kb.child.run_command's
`warm=True`) and ends when main returns, without exit()'s teardown of that static state (0.1 s more). The servers are
kept with kb.forkserver's. Where the shim cannot be built (no C compiler) or does not load, the step runs as a fresh
process, as before.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from kb import forkserver, paths

SOURCE = Path(__file__).with_name("zygote.c")
_built: dict[str, Path | None] = {}
_refused: set[str] = set()  # converters whose server did not answer: each step runs fresh


def library() -> Path | None:
    """The shim, built once per source into kb's tools folder (a rename makes it appear whole); None without cc."""
    text = SOURCE.read_bytes()
    digest = hashlib.sha256(text).hexdigest()[:12]
    if digest not in _built:
        lib = paths.state("tools") / f"zygote-{digest}.so"
        if not lib.is_file():
            cc = shutil.which("cc") or shutil.which("gcc")
            if cc is None:
                _built[digest] = None
                return None
            lib.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=lib.parent) as tmp:
                out = Path(tmp) / lib.name
                r = subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(out), str(SOURCE), "-ldl"],
                                   capture_output=True, timeout=120)
                if r.returncode != 0:
                    _built[digest] = None
                    return None
                os.replace(out, lib)
        _built[digest] = lib
    return _built[digest]


def call(argv: list[str], env: dict[str, str], output: Path, timeout: float, cwd: Path | None,
         memory: int | None) -> tuple[int | None, bool] | None:
    """Run `argv` (a dynamically linked binary) as a fork of its warm server, with `env`, its output in `output`.
    Returns (returncode, negative for a signal; timed_out), or None where it cannot (run it fresh instead)."""
    lib = library()
    if lib is None or argv[0] in _refused:
        return None
    fields = [str(cwd or ""), str(output), str(int(timeout * 1000)), str(memory or 0), str(len(env)),
              *(f"{k}={v}" for k, v in env.items()), *argv]
    if any("\0" in f for f in fields):
        return None
    job = f"{len(fields)}\n".encode() + b"".join(f.encode() + b"\0" for f in fields)
    server_env = {**env, "KB_ZYGOTE": "1", "LD_PRELOAD": str(lib)}
    reply = forkserver.ask(("zygote", argv[0], str(lib)), [argv[0]], server_env, job, timeout,
                           lambda line: line.startswith(b"kb.zygote "))
    try:
        _, timed_out, status = (reply or b"").split()
        timed_out, status = int(timed_out), int(status)
    except ValueError:
        _refused.add(argv[0])  # no server came up (a static binary, a failed preload): not again in this process
        return None
    return os.waitstatus_to_exitcode(status), bool(timed_out)
