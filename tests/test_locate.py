"""`kb locate`: the first node where an engine leaves onnxruntime's values, or the smallest prefix of the graph
that still fails the same way; the KB entry that describes it; one line for bad input.

The engine cases run the real engines on tiny models: onnx2ncnn writes HardSwish with alpha 0.2 (KB039),
mnnconvert 3.6.1 segfaults on a dynamo-exported LSTM (KB064), and a Conv -> Relu -> Conv chain runs right on
every engine. The entries they name are copied into a corpus of the test's own. The rules (what is the
culprit, what bisection keeps) are also tested on made-up engine results, without any engine."""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from kb import locate as L
from kb import paths
from kb.engines import missing
from kb.match import codes

ROOT = Path(__file__).resolve().parent.parent
F = TensorProto.FLOAT
ENTRIES = ["ncnn-onnx2ncnn-hardswish-alpha", "mnn-lstm-single-output-crash", "ncnn-onnx2ncnn-external-data",
           "ncnn-onnx2ncnn-dynamic-shape-ops", "ncnn-onnx2ncnn-flatten-leading-axes",
           "ncnn-onnx2ncnn-squeeze-unsqueeze-axes", "pnnx-binaryop-batch-axis-mismatch"]


@pytest.fixture
def real_kb(tmp_path, monkeypatch):
    """The real entries these tests name, in a corpus of their own: adding an entry cannot change them."""
    root = tmp_path / "real"
    for slug in [*ENTRIES, "_messages"]:
        shutil.copytree(ROOT / "repros" / slug, root / "repros" / slug, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("tools", "cache"):  # the engines built and the exports made for the real corpus stay in use
        monkeypatch.setenv(paths.STATE[name], str(paths.state(name)))
    monkeypatch.setenv("KB_ROOT", str(root))
    monkeypatch.setenv("KB_RECORDS", str(tmp_path / "records"))
    monkeypatch.delenv("KB_SITE_URL", raising=False)
    return root


def needs(*engines):
    why = [m for e in engines if (m := missing(e))]
    return pytest.mark.skipif(bool(why), reason="; ".join(why))


def conv_chain(path: Path, activation: str) -> Path:
    """x -> Conv 3x3 -> activation -> Conv 1x1 -> y, opset 14 (HardSwish is an ONNX op from 14)."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32) * 0.5, n)
             for n, s in (("w1", (8, 3, 3, 3)), ("b1", (8,)), ("w2", (4, 8, 1, 1)))]
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node(activation, ["c1"], ["act"], name="act"),
             helper.make_node("Conv", ["act", "w2"], ["y"], name="conv2", kernel_shape=[1, 1])]
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", F, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("y", F, [1, 4, 8, 8])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, str(path))
    return path


EXPORT_LSTM = textwrap.dedent("""
    import sys, torch
    from torch import nn

    class Net(nn.Module):  # Linear -> LSTM -> Linear; only the LSTM's sequence output is used
        def __init__(self):
            super().__init__()
            self.a, self.rnn, self.b = nn.Linear(12, 16), nn.LSTM(16, 16, batch_first=True), nn.Linear(16, 8)

        def forward(self, x):
            y, _ = self.rnn(torch.tanh(self.a(x)))
            return self.b(y)

    torch.manual_seed(0)
    torch.onnx.export(Net().eval(), (torch.randn(1, 6, 12),), sys.argv[1], dynamo=True, input_names=["x"],
                      output_names=["y"], external_data=False)
""")


@pytest.fixture(scope="module")
def lstm_dynamo(tmp_path_factory):
    """An LSTM exported with dynamo=True (its LSTM node writes Y only), exported in a child: torch never
    runs in kb's own process."""
    path = tmp_path_factory.mktemp("lstm") / "lstm.onnx"
    r = subprocess.run([sys.executable, "-c", EXPORT_LSTM, str(path)], capture_output=True, text=True, timeout=300,
                       check=False)
    assert r.returncode == 0, r.stderr[-2000:]
    return path


# ---- on the engines ------------------------------------------------------------------------------


@needs("onnx2ncnn", "ncnn")
def test_onnx2ncnn_hardswish_is_the_culprit_and_known(real_kb, tmp_path, capsys):
    model = conv_chain(tmp_path / "hs.onnx", "HardSwish")
    code = L.command(str(model), "onnx2ncnn", None, True, None, 120)
    r = json.loads(capsys.readouterr().out)
    assert code == codes.FOUND
    c = r["culprit"]
    assert (c["node"], c["kind"], c["tensor"]) == ({"name": "act", "op": "HardSwish"}, "mismatch", "act")
    assert c["max_abs"] > 0.1 > c["atol"]  # alpha 0.2 instead of 1/6: about 0.2 off
    assert c["inputs"] == [{"name": "c1", "shape": [1, 8, 8, 8]}]
    assert r["last_good"]["node"] == {"name": "conv1", "op": "Conv"}  # conv2 diverges too, but downstream
    assert r["known"][0]["id"] == "KB039" and r["known"][0]["on_culprit"] and r["known"][0]["fits"]
    assert r["known"][0]["url"].endswith("/ncnn-onnx2ncnn-hardswish-alpha/")


@needs("mnn")
def test_mnn_lstm_crash_is_bisected_to_the_lstm(real_kb, lstm_dynamo):
    r = L.locate(str(lstm_dynamo), "mnn", timeout=120)
    c = r.culprit
    assert c["node"]["op"] == "LSTM"
    assert (c["kind"], c["stage"]) == ("crash", "convert")
    assert c["signal"] in L.MEMORY  # one out-of-bounds write: SIGSEGV, SIGBUS or SIGABRT, run to run
    assert r.last_good is not None and r.last_good["node"]["op"] != "LSTM"  # the prefix before it converts
    assert [k["id"] for k in r.known if k["fits"]] == ["KB064"]
    assert "KB064 describes this" in L.as_text(r)


@pytest.mark.parametrize("engine", [pytest.param("mnn", marks=needs("mnn")),
                                    pytest.param("onnx2ncnn", marks=needs("onnx2ncnn", "ncnn")),
                                    pytest.param("pnnx", marks=needs("pnnx", "ncnn"))])
def test_a_model_that_converts_right_has_no_culprit(real_kb, tmp_path, engine):
    r = L.locate(str(conv_chain(tmp_path / "relu.onnx", "Relu")), engine, timeout=120)
    assert r.culprit is None and r.known == []
    assert r.compared >= 1  # at least the output, compared and agreeing
    assert "no divergence" in L.as_text(r)


@needs("mnn")
def test_mnn_takes_a_relative_model_path(real_kb, tmp_path, monkeypatch):
    """mnnconvert runs in locate's work folder: a model path relative to the user's folder still names the model
    (it said 'Model File Does Not Exist!' and locate reported a failure that is no node's)."""
    conv_chain(tmp_path / "relu.onnx", "Relu")
    monkeypatch.chdir(tmp_path)
    r = L.locate("relu.onnx", "mnn", timeout=120)
    assert r.culprit is None and r.compared >= 1


# ---- the rules, on made-up engine results ----------------------------------------------------------


def chain(n: int, op: str = "Relu") -> L.Graph:
    """x -> t0 -> t1 -> ... -> t{n-1} (the graph output), one `op` node per step."""
    nodes = [helper.make_node(op, ["x" if i == 0 else f"t{i - 1}"], [f"t{i}"], name=f"n{i}") for i in range(n)]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [4])],
                          [helper.make_tensor_value_info(f"t{n - 1}", F, [4])])
    return L.Graph.of(helper.make_model(g), Path("chain.onnx"))


REF = {f"t{i}": np.arange(4, dtype=np.float32) * (i + 1) for i in range(4)}


def engine_gave(**tensors):
    """Engine results: a tensor off by 100 where its value is "bad", as the reference where "ok"."""
    return L.Read(got={t: REF[t] + (100.0 if v == "bad" else 0.0) for t, v in tensors.items()})


def test_the_culprit_is_the_first_divergent_node_not_one_downstream():
    culprit, last_good, unreadable, compared = L.diverged(chain(4), REF, engine_gave(t0="ok", t1="bad", t2="bad",
                                                                                      t3="bad"), L.TOL)
    assert culprit["node"]["name"] == "n1" and culprit["max_abs"] == 100.0
    assert last_good["node"]["name"] == "n0" and compared == 4 and unreadable == []


def test_an_unreadable_node_whose_consumer_agrees_is_fine():
    culprit, last_good, unreadable, _ = L.diverged(chain(4), REF, engine_gave(t1="ok", t2="ok", t3="bad"), L.TOL)
    assert culprit["node"]["name"] == "n3" and culprit["suspects"] == []
    assert last_good["node"]["name"] == "n2" and unreadable == ["t0"]


def test_an_unreadable_node_before_the_divergence_is_a_suspect():
    culprit, last_good, _, _ = L.diverged(chain(4), REF, engine_gave(t0="ok", t3="bad"), L.TOL)
    assert culprit["node"]["name"] == "n3"
    assert [s["name"] for s in culprit["suspects"]] == ["n1", "n2"]
    assert last_good["node"]["name"] == "n0"


def test_a_name_that_moved_to_a_later_tensor_is_unreadable_not_wrong():
    """mnnconvert fuses a Round into the Gemm before it and names the result after the Gemm's output."""
    read = L.Read(got={"t0": REF["t0"], "t1": REF["t2"], "t2": REF["t2"], "t3": REF["t3"] + 100})
    culprit, _, unreadable, _ = L.diverged(chain(4), REF, read, L.TOL)
    assert culprit["node"]["name"] == "n3" and unreadable == ["t1"] and "'t2'" in read.unreadable["t1"]


def test_pnnx_blobs_mapped_by_value_put_the_culprit_after_the_last_one_that_agrees():
    """pnnx renames blobs: t0 and t1 are found by value, t2 by no blob, the output (by position) is wrong."""
    read = L.Read(got={"blob:1": REF["t0"], "blob:2": REF["t1"], "t3": REF["t3"] + 100}, by_value=True)
    culprit, last_good, unreadable, _ = L.diverged(chain(4), REF, read, L.TOL)
    assert culprit["node"]["name"] == "n2" and culprit["observed_at"]["name"] == "n3"
    assert last_good["node"]["name"] == "n1" and unreadable == ["t2"]


def test_the_tolerance_scales_with_magnitude_and_never_goes_below_atol():
    assert L.tolerance(np.array([0.5], np.float32)) == pytest.approx(1e-4)
    assert L.tolerance(np.array([-300.0, 2.0], np.float32)) == pytest.approx(3e-2)
    assert L.tolerance(np.array([300.0], np.float16)) == pytest.approx(3.0)
    assert L.compare(np.array([1000.0], np.float32), np.array([1000.05])).agrees  # float32 rounding at 1e3
    assert L.compare(np.array([1.0, 2.0], np.float32), np.array([[1.0, 2.0]])).agrees  # a unit axis
    assert L.compare(np.array([1.0], np.float32), np.array([np.nan])).status == "nan"
    six = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert L.compare(six, six.T).status == "shape"  # the same count, in another order
    assert L.compare(six.reshape(1, 2, 3, 1, 1), six.reshape(2, 3)).agrees  # folded as ncnn folds 5-D: same order
    assert L.compare(np.ones(6, np.float32), np.ones(5)).status == "shape"


class FakeRunner:
    """Fails like an engine that crashes on any graph holding a Tanh, and errors out on one holding an Abs."""

    def __init__(self):
        self.models = []
        self.say = print

    def read(self, g, model, feed, wanted, until="run"):
        ops = {n.op_type for n in g.nodes}
        self.models.append(len(g.nodes))
        if "Tanh" in ops:
            return L.Read(L.Fate("convert", "crash", "SIGSEGV", "Use While", "conv"))
        if "Abs" in ops:
            return L.Read(L.Fate("convert", "convert-error", None, "Abs not supported", "conv"))
        return L.Read()


def mixed(ops: list[str]) -> L.Graph:
    nodes = [helper.make_node(op, ["x" if i == 0 else f"t{i - 1}"], [f"t{i}"], name=f"n{i}") for i, op in enumerate(ops)]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [4])],
                          [helper.make_tensor_value_info(f"t{len(ops) - 1}", F, [4])])
    return L.Graph.of(helper.make_model(g), Path("mixed.onnx"))


def test_the_other_ops_the_converter_cannot_convert_are_named_with_their_entries(real_kb):
    # a custom op fails first; onnx2ncnn also said it cannot convert a Shape further on, which KB016 describes
    nodes = [helper.make_node("FeatureConversion", ["x"], ["f"], name="custom", domain="custom"),
             helper.make_node("Shape", ["f"], ["s"], name="shape"),
             helper.make_node("Reshape", ["f", "s"], ["y"], name="reshape")]
    g = L.Graph.of(helper.make_model(helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", F, [1, 4])], [helper.make_tensor_value_info("y", F, [1, 4])])),
        Path("two.onnx"))
    said = "FeatureConversion not supported yet!\nShape not supported yet!\n"
    culprit = {"node": g.node_json(0), "kind": "load-error", "stage": "load"}
    (u,) = L.unconverted(g, said, "onnx2ncnn", culprit)
    assert (u["op"], u["nodes"], u["line"]) == ("Shape", ["shape"], "Shape not supported yet!")
    assert [k["id"] for k in u["known"]] == ["KB016"]
    assert L.unconverted(g, "", "onnx2ncnn", culprit) == []  # nothing said, nothing named


def test_an_entrys_own_line_in_the_converters_output_names_it_with_its_nodes(real_kb):
    # a custom op fails first; onnx2ncnn also printed KB108's own line, for the Flatten its trigger matches
    nodes = [helper.make_node("FeatureConversion", ["x"], ["f"], name="custom", domain="custom"),
             helper.make_node("Flatten", ["f"], ["y"], name="flat", axis=2)]
    g = L.Graph.of(helper.make_model(helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", F, [1, 2, 3, 4])],
        [helper.make_tensor_value_info("y", F, [2, 12])])), Path("two.onnx"))
    culprit = {"node": g.node_json(0), "kind": "load-error", "stage": "load"}
    said = "FeatureConversion not supported yet!\nUnsupported Flatten axis 2!\n"
    (u,) = L.unconverted(g, said, "onnx2ncnn", culprit)
    assert (u["op"], u["nodes"], u["line"]) == ("Flatten", ["flat"], "Unsupported Flatten axis 2!")
    assert [k["id"] for k in u["known"]] == ["KB108"]
    assert not u["before"]  # after the custom op that fails first
    assert "also printed (Unsupported Flatten axis 2!): Flatten, 1 node from 'flat'; KB108 matches it" in L.as_text(L.Located(
        Path("two.onnx"), "onnx2ncnn", None, {**culprit, "attributes": {}, "inputs": [], "prefix_nodes": 1},
        None, [], 0, [], [u], [], 1.0, 1))
    # an entry already named for the culprit is not named again; a line of a generic message names none alone
    known = [{"id": "KB108"}]
    assert L.unconverted(g, said, "onnx2ncnn", culprit, known) == []
    assert L.unconverted(g, "FeatureConversion not supported yet!\nUnsupported squeeze axes !\n", "onnx2ncnn",
                         culprit) == []
    # before the culprit, in the prefix that fails, it may be the cause
    (u,) = L.unconverted(g, "Unsupported Flatten axis 2!\n", "onnx2ncnn", {**culprit, "node": g.node_json(1)})
    assert u["before"]
    # with the entry's own evidence in the output, it does (KB071: the axes are 1 and 0)
    line = "binaryop broadcast across batch axis 1 and 0 is not supported"
    assert [k["id"] for u in L.unconverted(g, line, "pnnx", culprit) for k in u["known"]] == ["KB071"]
    assert L.unconverted(g, line.replace("1 and 0", "233 and 0"), "pnnx", culprit) == []


def test_bisection_keeps_the_smallest_prefix_that_fails_the_same_way(tmp_path):
    ops = ["Relu", "Abs", "Relu", "Relu", "Tanh", "Relu", "Relu", "Relu"]
    g = mixed(ops)
    ref = {f"t{i}": np.ones(4, np.float32) for i in range(len(ops))}
    runner = FakeRunner()
    crash = L.Fate("convert", "crash", "SIGSEGV", "Use While", "conv")
    culprit, last_good, _ = L.bisect(g, ref, tmp_path / "in.npz", tmp_path, runner, crash, lambda _: None)
    # the Abs prefix fails too, but with an error, not a crash: not the same way
    assert culprit["node"] == {"name": "n4", "op": "Tanh"} and culprit["prefix_nodes"] == 5
    assert last_good["node"] == {"name": "n3", "op": "Relu"}
    assert len(runner.models) <= 4  # binary search: about log2(8) conversions


class LoadRunner:
    """Fails to load any graph holding a Tanh or an Abs, naming the Tanh first (ncnn names the first layer it
    cannot load in the order of its .param, which need not be the graph's)."""

    def __init__(self):
        self.say = print

    def read(self, g, model, feed, wanted, until="run"):
        ops = {n.op_type for n in g.nodes}
        for op in ("Tanh", "Abs"):
            if op in ops:
                return L.Read(L.Fate("load", "load-error", None, f"layer {op} not exists or registered", "ncnn"))
        return L.Read()


def test_bisecting_a_load_failure_keeps_a_prefix_that_fails_to_load_on_another_layer(tmp_path):
    ops = ["Relu", "Relu", "Abs", "Relu", "Relu", "Tanh", "Relu", "Relu"]
    g = mixed(ops)
    ref = {f"t{i}": np.ones(4, np.float32) for i in range(len(ops))}
    whole = L.Fate("load", "load-error", None, "layer Tanh not exists or registered", "ncnn")
    culprit, last_good, notes = L.bisect(g, ref, tmp_path / "in.npz", tmp_path, LoadRunner(), whole, lambda _: None)
    # the whole model names the Tanh, but the Abs before it cannot be loaded either: it is the first
    assert culprit["node"] == {"name": "n2", "op": "Abs"} and culprit["error"] == "layer Abs not exists or registered"
    assert last_good["node"] == {"name": "n1", "op": "Relu"}
    assert any("another layer first" in n for n in notes)
    # a failure of another stage is still not the same one
    assert not whole.fails_like(L.Fate("run", "crash", "SIGSEGV", "x", "s"))
    assert not L.Fate("run", "run-error", None, "a", "s").fails_like(L.Fate("run", "run-error", None, "b", "s"))


class IdentityRunner:
    """Fails to load any graph holding an Identity, as ncnn does what onnx2ncnn writes for one."""

    def __init__(self):
        self.say = print

    def read(self, g, model, feed, wanted, until="run"):
        if any(n.op_type == "Identity" for n in g.nodes):
            return L.Read(L.Fate("load", "load-error", None, "layer Identity not exists or registered", "ncnn"))
        return L.Read()


def test_a_failure_that_comes_with_a_constant_a_node_reads_is_the_constant_nodes(tmp_path):
    # the Identity of a weight computes no bisection point: the prefixes end at Relu, Relu, Mul, Relu
    nodes = [helper.make_node("Identity", ["w"], ["w2"], name="c"),
             helper.make_node("Relu", ["x"], ["t0"], name="n0"), helper.make_node("Relu", ["t0"], ["t1"], name="n1"),
             helper.make_node("Mul", ["t1", "w2"], ["t2"], name="n2"), helper.make_node("Relu", ["t2"], ["t3"], name="n3")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [4])],
                              [helper.make_tensor_value_info("t3", F, [4])],
                              [numpy_helper.from_array(np.ones(4, np.float32), "w")])
    g = L.Graph.of(helper.make_model(graph), Path("const.onnx"))
    ref = {t: np.ones(4, np.float32) for t in ("w2", "t0", "t1", "t2", "t3")}
    whole = L.Fate("load", "load-error", None, "layer Identity not exists or registered", "ncnn")
    culprit, last_good, notes = L.bisect(g, ref, tmp_path / "in.npz", tmp_path, IdentityRunner(), whole, lambda _: None)
    assert culprit["node"] == {"name": "c", "op": "Identity"}
    assert last_good["node"] == {"name": "n1", "op": "Relu"}
    assert any("computes a constant n2 (Mul) reads" in n for n in notes)


def test_the_same_failure_means_the_same_signal_or_the_same_first_error_line():
    a = L.Fate("convert", "convert-error", None, "Can't convert node 'x/12': Einsum not supported", "s")
    b = L.Fate("convert", "convert-error", None, "Can't convert node 'y/3': Einsum not supported", "s")
    c = L.Fate("convert", "convert-error", None, "Broad cast error", "s")
    assert a.same(b) and not a.same(c)
    assert not a.same(L.Fate("run", "run-error", None, a.line, "s"))
    assert L.Fate("run", "crash", "SIGSEGV", "x", "s").same(L.Fate("run", "crash", "SIGSEGV", "y", "s"))
    assert L.first_error("[16:00:04] :47: ONNX Model opset version: 14\nError for node Foo\nlast") == "Error for node Foo"


# ---- bad input ----------------------------------------------------------------------------------------


def kb(*args, cwd):
    return subprocess.run([sys.executable, "-m", "kb", "locate", *args], capture_output=True, text=True, cwd=cwd,
                          env=os.environ, check=False)


def test_bad_input_gets_one_line_and_its_own_exit_code(tmp_path):
    (tmp_path / "notes.txt").write_text("not a model\n")
    model = conv_chain(tmp_path / "m.onnx", "Relu")
    for args, code, words in [(["missing.onnx", "--engine", "mnn"], codes.MISSING, "missing.onnx: no such file"),
                              (["notes.txt", "--engine", "mnn"], codes.NOT_A_MODEL, "notes.txt: is not an ONNX model"),
                              ([str(model), "--engine", "tflite"], codes.BAD_ENGINE, "unknown engine 'tflite'"),
                              ([str(model), "--engine", "ncnn"], codes.BAD_ENGINE, "kb locate drives mnn"),
                              ([str(model), "--engine", "mnn", "--inputs", "notes.txt"], codes.BAD_INPUTS,
                               "notes.txt: is not an .npz")]:
        r = kb(*args, cwd=tmp_path)
        assert r.returncode == code, (args, r.stderr)
        assert words in r.stderr and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_an_input_is_fed_as_the_models_own_script_feeds_it():
    """pnnx's script squeezes its batch axis with torch's squeeze(k), a no-op where that axis is not 1: a (1, 32, 40)
    input whose declared batch axis is 1 is fed whole (numpy's squeeze raised, and locate blamed the wrong node)."""
    from kb.workers.locate import as_fed

    x = np.zeros((1, 32, 40), np.float32)
    assert as_fed(x, 1).shape == (1, 32, 40) and as_fed(x, 0).shape == (32, 40)
    assert as_fed(x, "leading").shape == (32, 40) and as_fed(x, None).shape == (1, 32, 40)
