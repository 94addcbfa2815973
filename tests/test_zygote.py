"""kb.zygote: a warm converter's step is a fork that runs its main() as a fresh process would, and says so."""

import shutil
import subprocess

import pytest

from kb import forkserver, zygote
from kb.child import run_command

SH = shutil.which("sh")


@pytest.fixture(autouse=True)
def needs_the_shim(tmp_path, monkeypatch):
    monkeypatch.setenv("KB_TOOLS", str(tmp_path / "tools"))
    monkeypatch.setattr(zygote, "_built", {})
    forkserver._stop_all()  # each test counts the servers it started
    if zygote.library() is None:
        pytest.skip("no C compiler: kb.zygote runs each step fresh (tested below)")
    yield
    forkserver._stop_all()


def served(binary: str) -> int:
    """How many warm servers of `binary` kb keeps."""
    return sum(1 for key in forkserver._servers if key[0][:2] == ("zygote", binary))


def test_a_warm_step_keeps_its_signal_code_and_output():
    step = run_command("crash", [SH, "-c", "echo engine says; kill -SEGV $$"], warm=True)
    assert served(SH) == 1
    assert step.signal == "SIGSEGV" and "engine says" in step.output
    step = run_command("exit", [SH, "-c", "echo out; echo err >&2; exit 3"], warm=True)
    assert step.returncode == 3 and step.signal is None and step.output.split() == ["out", "err"]


def test_a_warm_step_has_its_own_environment_and_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("KB_ROOT", "/first")
    run_command("first", [SH, "-c", "true"], warm=True)
    monkeypatch.setenv("KB_ROOT", "/second")
    step = run_command("env", [SH, "-c", 'echo "$KB_ROOT $FOO ${KB_ZYGOTE-none} ${LD_PRELOAD-none}"; pwd'],
                       env={"FOO": "bar"}, cwd=tmp_path, warm=True)
    assert step.output.split() == ["/second", "bar", "none", "none", str(tmp_path)]


def test_a_warm_step_that_overstays_is_killed():
    step = run_command("hang", [SH, "-c", "sleep 30"], timeout=0.5, warm=True)
    assert served(SH) == 1
    assert step.timed_out and step.duration < 5 and not step.ok


def test_a_binary_the_shim_cannot_serve_runs_fresh(tmp_path, monkeypatch):
    """A converter that prints its usage and exits (the shim did not load) is run as a fresh process."""
    bogus = tmp_path / "bogus.so"
    bogus.write_bytes(b"not a library")
    monkeypatch.setattr(zygote, "library", lambda: bogus)
    monkeypatch.setattr(zygote, "_refused", set())
    step = run_command("usage", [SH, "-c", "echo fresh"], warm=True)
    assert step.ok and step.output.strip() == "fresh" and SH in zygote._refused


def test_without_a_compiler_each_step_runs_fresh(monkeypatch):
    monkeypatch.setattr(zygote, "library", lambda: None)
    step = run_command("fresh", [SH, "-c", "echo fresh"], warm=True)
    assert step.ok and step.output.strip() == "fresh" and served(SH) == 0


def test_pnnx_writes_the_same_files_warm_and_fresh(tmp_path, monkeypatch):
    """pnnx's own main after its initializers ran in the server: every file it writes is byte-identical."""
    from onnx import TensorProto, helper, save

    from kb.engines.pnnx import convert_step, executable

    pytest.importorskip("pnnx")
    x = helper.make_tensor_value_info("in0", TensorProto.FLOAT, [1, 3, 8, 8])
    y = helper.make_tensor_value_info("out0", TensorProto.FLOAT, [1, 3, 8, 8])
    model = helper.make_model(helper.make_graph([helper.make_node("Sigmoid", ["in0"], ["t"]),
                                                 helper.make_node("Mul", ["in0", "t"], ["out0"])], "silu", [x], [y]),
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8  # pnnx's onnxruntime reads up to 13 (onnx writes newer)
    save(model, str(tmp_path / "silu.onnx"))
    files = {}
    for warm in (False, True):
        work = tmp_path / str(warm)
        if not warm:
            monkeypatch.setattr(zygote, "library", lambda: None)  # every step fresh
        step, param, _ = convert_step(tmp_path / "silu.onnx", work, ["[1,3,8,8]"])
        monkeypatch.undo()
        assert step.ok, step.output
        # the scripts name the files by their paths, which differ by the folder
        files[warm] = {p.name: p.read_bytes().replace(str(work).encode(), b"WORK") for p in sorted(work.iterdir())
                       if p.name != "silu.onnx"}
    assert served(executable()) == 1
    assert files[True].keys() == files[False].keys() and len(files[True]) >= 5
    assert files[True] == files[False]
    assert "Swish" in files[True]["silu.ncnn.param"].decode()


def test_a_server_that_answers_without_its_name_is_stopped(tmp_path, monkeypatch):
    """cat without the shim echoes the job back: that line is no reply, so that server goes and the step runs fresh."""
    bogus = tmp_path / "bogus.so"
    bogus.write_bytes(b"not a library")
    monkeypatch.setattr(zygote, "library", lambda: bogus)
    monkeypatch.setattr(zygote, "_refused", set())
    cat, text = shutil.which("cat"), tmp_path / "text"
    text.write_text("fresh\n")
    step = run_command("cat", [cat, str(text)], warm=True)
    assert step.ok and step.output == "fresh\n" and cat in zygote._refused and served(cat) == 0


def test_a_warm_step_keeps_what_main_left_in_its_buffers(tmp_path):
    """The child ends without exit()'s teardown once main returns: what main printed but did not flush still shows."""
    src, binary = tmp_path / "buffered.c", tmp_path / "buffered"
    src.write_text('#include <stdio.h>\nint main(int c, char **v) { printf("kept %s", v[1]); return 4; }\n')
    cc = shutil.which("cc") or shutil.which("gcc")
    subprocess.run([cc, "-o", str(binary), str(src)], check=True, capture_output=True, timeout=120)
    step = run_command("buffered", [str(binary), "it"], warm=True)
    assert served(str(binary)) == 1
    assert step.returncode == 4 and step.output == "kept it"
