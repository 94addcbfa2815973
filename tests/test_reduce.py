"""`kb reduce`: a failing model padded with unrelated nodes reduces to a few nodes that still fail the same way
(asserted by running the engine again on the saved file); a model that does not fail writes nothing; bad input
gets one line. `kb new --from` writes a torch reproducer from a reduced graph.

The engine cases run the real engines on tiny models: onnx2ncnn writes HardSwish with alpha 0.2 (KB039),
mnnconvert 3.6.1 segfaults on a dynamo-exported LSTM (KB064); see tests/test_locate.py."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from kb import locate as L
from kb import paths
from kb import reduce as R
from kb.match import codes
from tests import test_locate as TL
from tests.test_locate import ENTRIES, ROOT, conv_chain, needs

real_kb, lstm_dynamo = TL.real_kb, TL.lstm_dynamo  # fixtures

F = TensorProto.FLOAT


def padded_hardswish(path: Path) -> Path:
    """Conv -> Relu -> Conv -> HardSwish -> Conv -> Relu: only the HardSwish goes wrong on onnx2ncnn."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32) * 0.5, n)
             for n, s in (("w1", (8, 3, 3, 3)), ("b1", (8,)), ("w2", (8, 8, 1, 1)), ("w3", (4, 8, 1, 1)))]
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2", kernel_shape=[1, 1]),
             helper.make_node("HardSwish", ["c2"], ["hs"], name="hswish"),
             helper.make_node("Conv", ["hs", "w3"], ["c3"], name="conv3", kernel_shape=[1, 1]),
             helper.make_node("Relu", ["c3"], ["y"], name="relu2")]
    g = helper.make_graph(nodes, "padded", [helper.make_tensor_value_info("x", F, [1, 3, 16, 16])],
                          [helper.make_tensor_value_info("y", F, [1, 4, 16, 16])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, str(path))
    return path


def kb(*args, cwd, env=None):
    return subprocess.run([sys.executable, "-m", "kb", *args], capture_output=True, text=True, cwd=cwd,
                          env=env or os.environ, check=False, timeout=300)


@pytest.fixture(scope="module")
def hardswish_reduced(tmp_path_factory):
    """The padded HardSwish model reduced on onnx2ncnn, with the real KB039 in the corpus."""
    tmp = tmp_path_factory.mktemp("hs")
    mp = pytest.MonkeyPatch()
    try:
        root = tmp / "real"
        for slug in [*ENTRIES, "_messages"]:
            shutil.copytree(ROOT / "repros" / slug, root / "repros" / slug,
                            ignore=shutil.ignore_patterns("__pycache__"))
        for name in ("tools", "cache"):
            mp.setenv(paths.STATE[name], str(paths.state(name)))
        mp.setenv("KB_ROOT", str(root))
        mp.setenv("KB_RECORDS", str(tmp / "records"))
        mp.delenv("KB_SITE_URL", raising=False)
        out = tmp / "out" / "reduced.onnx"
        red = R.reduce(str(padded_hardswish(tmp / "hs.onnx")), "onnx2ncnn", out=out, timeout=120)
        yield red, out, root
    finally:
        mp.undo()


# ---- on the engines ------------------------------------------------------------------------------


@needs("onnx2ncnn", "ncnn")
def test_a_padded_hardswish_reduces_to_the_hardswish_and_still_diverges(hardswish_reduced):
    red, out, _ = hardswish_reduced
    assert red.nodes_before == 6 and 1 <= red.nodes <= 3
    assert "HardSwish" in {n.op_type for n in onnx.load(str(out)).graph.node}
    stem = out.with_suffix("")
    for f in (out, Path(f"{stem}.inputs.npz"), Path(f"{stem}.expected.npz"), Path(f"{stem}.json")):
        assert f.is_file(), f
    # the engine, run again on the saved files: the same signature (a mismatch at the HardSwish)
    again = L.locate(str(out), "onnx2ncnn", inputs=f"{stem}.inputs.npz", timeout=120)
    c = again.culprit
    assert (c["node"]["op"], c["kind"]) == ("HardSwish", "mismatch") and c["max_abs"] > c["atol"]
    with np.load(f"{stem}.expected.npz") as z:  # onnxruntime's outputs, as saved
        assert set(z.files) == {o.name for o in onnx.load(str(out)).graph.output}
    text = R.markdown(red)
    assert "## onnx2ncnn" in text and "mismatch at HardSwish" in text
    assert "onnx2ncnn reduced.onnx reduced.param reduced.bin" in text
    assert "[KB039:" in text and "/ncnn-onnx2ncnn-hardswish-alpha/" in text and "no known entry" not in text


@needs("mnn")
def test_the_dynamo_lstm_reduces_to_the_lstm_and_still_crashes_mnnconvert(real_kb, lstm_dynamo, tmp_path):
    from kb.engines.mnn import convert_step

    out = tmp_path / "reduced.onnx"
    red = R.reduce(str(lstm_dynamo), "mnn", out=out, timeout=120)
    assert red.nodes_before > 5 and 1 <= red.nodes <= 3
    reduced = onnx.load(str(out))
    assert "LSTM" in {n.op_type for n in reduced.graph.node}
    step = convert_step(out, tmp_path / "again.mnn", timeout=120, cwd=tmp_path)  # the engine again, on the saved file
    assert step.signal in L.MEMORY
    assert red.signature()["kind"] == "crash" and red.signature()["step"] == "mnnconvert"
    text = R.markdown(red)
    assert "crash in convert" in text and "killed by SIG" in text and "[KB064:" in text
    assert not re.search(r"cand\d", text)  # the step is shown on the saved file's name, not a candidate's


@needs("onnx2ncnn", "ncnn")
def test_weights_in_external_data_stay_there_and_the_reduced_file_fails_as_the_model_does(real_kb, tmp_path):
    """onnx2ncnn reads no external data (KB045): a cut whose weights were moved into the file would convert.
    The reduced model keeps them in its own .data file, fails the same way, and names KB045."""
    from kb.engines.onnx2ncnn import convert_step

    model = onnx.load(str(padded_hardswish(tmp_path / "inline.onnx")))
    src = tmp_path / "m" / "model.onnx"
    src.parent.mkdir()
    onnx.save(model, str(src), save_as_external_data=True, all_tensors_to_one_file=True, location="model.onnx.data",
              size_threshold=0)
    out = tmp_path / "out" / "reduced.onnx"
    red = R.reduce(str(src), "onnx2ncnn", out=out, timeout=120)
    assert red.outcome is not None and red.nodes <= 2, R.markdown(red)
    assert out.with_name("reduced.onnx.data").is_file()
    assert any(t.data_location == TensorProto.EXTERNAL for t in onnx.load(str(out), load_external_data=False).graph.initializer)
    assert [k["id"] for k in red.known()] == ["KB045"]
    param, binf = tmp_path / "again.param", tmp_path / "again.bin"
    assert convert_step(out, param, binf).ok  # converts, then ncnn cannot load what it wrote, as with the model
    assert "load_param" in red.outcome.fate.line


@needs("onnx2ncnn", "ncnn")
def test_a_model_that_does_not_fail_says_so_and_writes_nothing(tmp_path):
    model = conv_chain(tmp_path / "relu.onnx", "Relu")
    r = kb("reduce", str(model), "--engine", "onnx2ncnn", "-o", "r.onnx", cwd=tmp_path)
    assert r.returncode == codes.NOTHING_FOUND, r.stderr
    assert "no failure on onnx2ncnn" in r.stdout and "nothing written" in r.stdout
    assert not list(tmp_path.glob("r.*"))


@needs("onnx2ncnn", "ncnn")
def test_kb_new_from_a_reduced_model_writes_a_torch_repro_that_exports_the_op(hardswish_reduced, tmp_path):
    red, out, root = hardswish_reduced
    env = {**os.environ, "KB_ROOT": str(root), "KB_RECORDS": str(tmp_path / "records")}
    r = kb("new", "onnx2ncnn-hardswish-reduced", "--engine", "onnx2ncnn", "--from", str(out), cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    folder = root / "repros" / "onnx2ncnn-hardswish-reduced"
    src = (folder / "repro.py").read_text()
    assert "F.hardswish(" in src and "TODO" not in src
    page = (folder / "README.md").read_text()
    assert "kind: mismatch" in page and "example: 'HardSwish: max abs diff" in page and "{op: HardSwish}" in page
    # the reproducer, exported in a child (torch never runs in kb's process): it holds the HardSwish
    onnx_out = tmp_path / "repro.onnx"
    code = ("import runpy, sys, torch; m = runpy.run_path(sys.argv[1]); c = next(m['cases']()); "
            "torch.onnx.export(c.module, c.inputs, sys.argv[2], input_names=c.input_names, "
            "output_names=c.output_names, opset_version=c.opset, dynamo=c.dynamo)")
    e = subprocess.run([sys.executable, "-c", code, str(folder / "repro.py"), str(onnx_out)], capture_output=True,
                       text=True, env=env, timeout=300, check=False)
    assert e.returncode == 0, e.stderr[-2000:]
    assert [n.op_type for n in onnx.load(str(onnx_out)).graph.node] == ["HardSwish"]


# ---- the rules, without an engine -----------------------------------------------------------------


def test_the_budget_is_the_whole_commands_locating_included(tmp_path, monkeypatch):
    """`--budget 60` is what the user waits for: the reduction gets what locating left, less the time to save."""
    model = conv_chain(tmp_path / "relu.onnx", "Relu")
    p = L.prepare(str(model), "mnn")
    located = L.Located(model, "mnn", None, None, None, [], 0, [], [], [], 50.0, 1)
    given = []
    monkeypatch.setattr(L, "locate", lambda *a, **k: located)
    monkeypatch.setattr(R, "run_reduction", lambda p, loc, budget, *a, **k: given.append(budget) or
                        R.Reduced(model, "mnn", None, None, loc, 1))
    R.reduce(p, out=tmp_path / "r.onnx", budget=60)
    assert given == [60 - 50.0 - R.SAVING]


def test_ddmin_keeps_only_what_the_failure_needs():
    needed = {3, 7}
    calls = []

    def test(subset):
        calls.append(subset)
        return needed <= set(subset)
    assert R._ddmin(list(range(10)), test) == [3, 7]
    assert len(calls) < 40
    budget = iter([True, None])  # one removal, then the time budget runs out: what was kept so far
    assert R._ddmin(list(range(10)), lambda subset: next(budget)) == [5, 6, 7, 8, 9]


def test_a_cut_feeds_the_cut_tensors_and_keeps_constants_as_initializers():
    nodes = [helper.make_node("Shape", ["w"], ["s"], name="shape"),  # constant: from an initializer only
             helper.make_node("Relu", ["x"], ["a"], name="relu"),
             helper.make_node("Reshape", ["a", "s"], ["b"], name="reshape"),
             helper.make_node("Tanh", ["b"], ["y"], name="tanh")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [2, 3])],
                          [helper.make_tensor_value_info("y", F, [3, 2])],
                          [numpy_helper.from_array(np.zeros((3, 2), np.float32), "w")])
    graph = L.Graph.of(helper.make_model(g), Path("g.onnx"))
    values = {"x": np.ones((2, 3), np.float32), "s": np.array([3, 2]), "a": np.full((2, 3), 2, np.float32),
              "b": np.full((3, 2), 2, np.float32), "y": np.zeros((3, 2), np.float32)}
    model, feed = R.Cutter(graph, values).build({2})  # the Reshape alone
    assert [i.name for i in model.graph.input] == ["a"] and feed["a"].shape == (2, 3)
    assert [t.name for t in model.graph.initializer] == ["s"]  # the Shape's output, folded to its value
    assert [o.name for o in model.graph.output] == ["b"]
    _, feed = R.Cutter(graph, values).build({2}, {"a": np.ones((1, 3), np.float32)})
    assert feed["a"].shape == (1, 3)


# ---- bad input ----------------------------------------------------------------------------------------


def test_bad_input_gets_one_line_and_its_own_exit_code(tmp_path):
    (tmp_path / "notes.txt").write_text("not a model\n")
    model = conv_chain(tmp_path / "m.onnx", "Relu")
    for args, code, words in [(["missing.onnx", "--engine", "mnn"], codes.MISSING, "missing.onnx: no such file"),
                              (["notes.txt", "--engine", "mnn"], codes.NOT_A_MODEL, "notes.txt: is not an ONNX model"),
                              ([str(model), "--engine", "tflite"], codes.BAD_ENGINE, "unknown engine 'tflite'"),
                              ([str(model), "--engine", "mnn", "-o", "out.txt"], codes.BAD_INPUTS, "must end in .onnx"),
                              ([str(model), "--engine", "mnn", "--budget", "0"], codes.BAD_INPUTS, "--budget"),
                              ([str(model), "--engine", "mnn", "--inputs", "notes.txt"], codes.BAD_INPUTS,
                               "notes.txt: is not an .npz")]:
        r = kb("reduce", *args, cwd=tmp_path)
        assert r.returncode == code, (args, r.stderr)
        assert words in r.stderr and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    r = kb("new", "some-entry", "--engine", "mnn", "--from", "notes.txt", cwd=tmp_path,
           env={**os.environ, "KB_ROOT": str(tmp_path)})
    assert r.returncode == codes.NOT_A_MODEL and "Traceback" not in r.stderr
    assert not (tmp_path / "repros" / "some-entry").exists()


def many_ops(path: Path, lstm: bool) -> Path:
    """Conv -> Relu -> Reshape -> Transpose -> MatMul -> Add -> Softmax -> Concat -> Sigmoid -> HardSwish ->
    Flatten -> Gemm (-> Unsqueeze -> LSTM, which does not map simply)."""
    rng = np.random.default_rng(0)

    def w(*shape):
        return rng.standard_normal(shape).astype(np.float32)
    inits = [numpy_helper.from_array(a, n) for n, a in (
        ("cw", w(4, 3, 3, 3)), ("cb", w(4)), ("shape", np.array([1, 4, 16], np.int64)), ("m", w(4, 4)),
        ("bias", w(4)), ("gw", w(6, 128)), ("gb", w(6)))]
    nodes = [helper.make_node("Conv", ["x", "cw", "cb"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Reshape", ["r", "shape"], ["rs"]),
             helper.make_node("Transpose", ["rs"], ["t"], perm=[0, 2, 1]),
             helper.make_node("MatMul", ["t", "m"], ["mm"]),
             helper.make_node("Add", ["mm", "bias"], ["a"]),
             helper.make_node("Softmax", ["a"], ["s"], axis=-1),
             helper.make_node("Concat", ["s", "a"], ["cat"], axis=-1),
             helper.make_node("Sigmoid", ["cat"], ["sg"]),
             helper.make_node("HardSwish", ["sg"], ["hs"]),
             helper.make_node("Flatten", ["hs"], ["f"], axis=1),
             helper.make_node("Gemm", ["f", "gw", "gb"], ["y"], transB=1)]
    if lstm:
        inits += [numpy_helper.from_array(w(1, 8, 6), "W"), numpy_helper.from_array(w(1, 8, 2), "R")]
        nodes += [helper.make_node("Unsqueeze", ["y"], ["u"], axes=[0]),
                  helper.make_node("LSTM", ["u", "W", "R"], ["z"], hidden_size=2)]
    out = "z" if lstm else "y"
    g = helper.make_graph(nodes, "many", [helper.make_tensor_value_info("x", F, [1, 3, 4, 4])],
                          [helper.make_tensor_value_info(out, F, [1, 1, 1, 1, 2] if lstm else [1, 6])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 8
    onnx.save(m, str(path))
    return path


def test_the_torch_repro_maps_simple_ops_and_names_the_others_as_todo(tmp_path):
    from kb.fromonnx import repro_source

    src, todo = repro_source(many_ops(tmp_path / "lstm.onnx", True), "KB999", "some-slug")
    assert todo == ["LSTM"] and "TODO: ONNX op LSTM(hidden_size=2)" in src and "NotImplementedError" in src
    compile(src, "repro.py", "exec")
    model = many_ops(tmp_path / "many.onnx", False)
    onnx.checker.check_model(onnx.load(str(model)), full_check=True)
    src, todo = repro_source(model, "KB999", "some-slug")
    assert todo == [] and "nn.Conv2d(3, 4, (3, 3)" in src and "nn.Linear(128, 6, bias=True)" in src
    (tmp_path / "repro.py").write_text(src)
    code = ("import runpy, sys, torch; m = runpy.run_path(sys.argv[1]); c = next(m['cases']()); "
            "torch.onnx.export(c.module, c.inputs, sys.argv[2], input_names=c.input_names, "
            "output_names=c.output_names, opset_version=c.opset, dynamo=c.dynamo)")
    e = subprocess.run([sys.executable, "-c", code, str(tmp_path / "repro.py"), str(tmp_path / "back.onnx")],
                       capture_output=True, text=True, timeout=300, check=False)
    assert e.returncode == 0, e.stderr[-2000:]
    back = [n.op_type for n in onnx.load(str(tmp_path / "back.onnx")).graph.node if n.op_type != "Constant"]
    assert back == [n.op_type for n in onnx.load(str(model)).graph.node]  # the same ops, in the same order


def test_a_case_edit_changes_the_exported_graph_and_keeps_external_weights_outside(tmp_path):
    """Case(edit=...) writes a graph torch never writes (KB091: a pool without strides); weights the exporter put
    in external data stay there."""
    from kb.export import _edit

    model = onnx.load(str(padded_hardswish(tmp_path / "inline.onnx")))
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True, location="m.onnx.data",
              size_threshold=0)

    def drop_pads(m):
        for n in m.graph.node:
            kept = [a for a in n.attribute if a.name != "pads"]
            del n.attribute[:]
            n.attribute.extend(kept)

    _edit(path, drop_pads)
    header = onnx.load(str(path), load_external_data=False)
    assert not any(a.name == "pads" for n in header.graph.node for a in n.attribute)
    assert all(t.data_location == TensorProto.EXTERNAL for t in header.graph.initializer)
    full = onnx.load(str(path))
    assert numpy_helper.to_array(full.graph.initializer[0]).shape == (8, 3, 3, 3)
