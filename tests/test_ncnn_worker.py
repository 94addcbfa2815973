"""Feeding ncnn from numpy: ncnn's Python Mat does not own numpy memory.

Before the worker kept its input arrays alive and cloned them into ncnn's memory, a first layer
that works in place segfaulted (ncnn 1.0.20240410 and 1.0.20261020), and a float64 input, converted
to a float32 temporary that was freed at once, came back as garbage. Every run is a child process
(kb.child), so a crash is a failed assertion here, not a dead pytest.
"""

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from kb.child import run_function
from kb.compare import Outputs

pytest.importorskip("ncnn")

# ReLU works in place on the input blob itself.
RELU = """7767517
2 2
Input            in0                      0 1 in0
ReLU             relu0                    1 1 in0 out0
"""
# Permute makes a new blob: (c, h, w) -> (c, w, h).
PERMUTE = """7767517
2 2
Input            in0                      0 1 in0
Permute          perm0                    1 1 in0 out0 0=1
"""


def relu(x):
    return np.maximum(x.astype(np.float32), 0)


def swap_hw(x):
    return x.astype(np.float32).swapaxes(-1, -2)


def run_worker(tmp_path: Path, param_text: str, x: np.ndarray, **kw):
    param = tmp_path / "model.param"
    param.write_text(param_text)
    feed, out = tmp_path / "in.npz", tmp_path / "out.npz"
    np.savez(feed, in0=x)
    # batch=False as a keyword: the worker's signature before the fix took it too
    step = run_function("ncnn run", "kb.workers.ncnn:run", timeout=60, param=str(param), bin=None,
                        feed=str(feed), out=str(out), batch=False, blobs_in=["in0"], blobs_out={"out0": "out0"}, **kw)
    return step, out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("param, expected", [(RELU, relu), (PERMUTE, swap_hw)], ids=["in-place-relu", "permute"])
def test_inputs_outlive_the_run(tmp_path, param, expected, dtype):
    x = np.random.default_rng(0).standard_normal((1, 8, 16, 16)).astype(dtype)
    step, out = run_worker(tmp_path, param, x)
    assert step.ok, f"ncnn worker: {step.fate()}: {step.output[-500:]}"
    with np.load(out) as z:
        got = z["out0"]
    want = expected(x)
    assert got.shape == want.shape
    assert float(np.abs(got - want).max()) == 0.0


@pytest.mark.parametrize("param_text, bin_bytes, message", [
    ("7767517\n2 2\nInput in0 0 1 in0\nNoSuchLayer x0 1 1 in0 out0\n", None, "load_param failed for model.param"),
    ("7767517\n2 2\nInput in0 0 1 in0\nConvolution c0 1 1 in0 out0 0=4 1=3 6=108\n", b"\0" * 8,
     "load_model failed for model.bin"),
], ids=["load-param", "load-model"])
def test_a_net_that_failed_to_load_is_never_run(tmp_path, param_text, bin_bytes, message):
    """extract() after a failed load segfaults: the worker stops with one line instead."""
    param = tmp_path / "model.param"
    param.write_text(param_text)
    bin = None
    if bin_bytes is not None:
        bin = tmp_path / "model.bin"
        bin.write_bytes(bin_bytes)
    np.savez(tmp_path / "in.npz", in0=np.ones((1, 3, 4, 4), np.float32))
    step = run_function("ncnn run", "kb.workers.ncnn:run", timeout=60, param=str(param),
                        bin=str(bin) if bin else None, feed=str(tmp_path / "in.npz"), out=str(tmp_path / "out.npz"),
                        batch=False, blobs_in=["in0"], blobs_out={"out0": "out0"})
    assert step.returncode == 1 and step.signal is None, step.fate()
    assert f"ncnn: {message}" in step.output.splitlines()
    assert not (tmp_path / "out.npz").exists()


def test_a_batch_axis_that_is_not_one_is_refused(tmp_path):
    step, _ = run_worker(tmp_path, RELU, np.ones((2, 8, 4, 4), np.float32), axes_in=[0], axes_out=[0])
    assert step.returncode == 1 and "ncnn: input 'in0': batch axis 0 of shape [2, 8, 4, 4] is not 1" in step.output


# What pnnx writes beside its outputs to run them: newer pnnx, then older pnnx.
PNNX_SCRIPT = """
        with net.create_extractor() as ex:
            ex.input("in0", ncnn.Mat(in0.numpy(), batch_index={index}).clone())

            _, out0 = ex.extract("out0")
            out.append(torch.from_numpy(out0.numpy(batch_index={index})))
"""
OLD_PNNX_SCRIPT = """
         with net.create_extractor() as ex:
            ex.input("in0", ncnn.Mat(in0.squeeze(0).numpy()).clone())
            ex.input("in1", ncnn.Mat(in1.numpy()).clone())

            _, out0 = ex.extract("out0")
            out.append(torch.from_numpy(np.array(out0)).unsqueeze(0))
            _, out1 = ex.extract("out1")
            out.append(torch.from_numpy(np.array(out1)))
"""


def test_pnnx_scripts_say_where_the_batch_axis_is(tmp_path):
    from kb.engines.pnnx import Feeding, feeding, read_feeding

    new = tmp_path / "a_ncnn.py"
    new.write_text(PNNX_SCRIPT.format(index=0))
    assert read_feeding(new) == Feeding(new, {"in0": 0}, {"out0": 0})
    new.write_text(PNNX_SCRIPT.format(index=233))
    assert read_feeding(new) == Feeding(new, {"in0": None}, {"out0": None})
    old = tmp_path / "b_ncnn.py"
    old.write_text(OLD_PNNX_SCRIPT)
    assert read_feeding(old) == Feeding(old, {"in0": 0, "in1": None}, {"out0": 0, "out1": None})
    assert read_feeding(tmp_path / "none_ncnn.py") is None
    (tmp_path / "m.ncnn.param").write_text(PERMUTE)
    assert feeding(tmp_path / "m.ncnn.param") is None  # no script beside it: not pnnx's
    (tmp_path / "m_ncnn.py").write_text(PNNX_SCRIPT.format(index=0))
    assert feeding(tmp_path / "m.ncnn.param").inputs == {"in0": 0}


class FakeSession:
    """Just what NCNN.run uses of a check's session."""

    def __init__(self, tmp_path: Path, x: np.ndarray, y: np.ndarray):
        self.workdir = tmp_path
        self.steps = []
        np.savez(tmp_path / "case.inputs.npz", in0=x)
        self.artifacts = SimpleNamespace(inputs=lambda case: tmp_path / "case.inputs.npz",
                                         reference=lambda case: Outputs(case, {"out0": y}, "numpy"))

    def path(self, name):
        return self.workdir / name

    def step(self, result, produces=()):
        self.steps.append(result)
        assert result.ok, f"{result.fate()}: {result.output[-500:]}"
        return result


@pytest.mark.parametrize("batch", [None, True])
def test_pnnx_models_are_fed_as_pnnx_feeds_them(tmp_path, batch):
    """batch=True, what the corpus's pnnx checks pass, follows pnnx's script as batch=None does."""
    from kb.engines.ncnn import NCNN

    x = np.random.default_rng(1).standard_normal((1, 8, 16, 16)).astype(np.float32)
    param = tmp_path / "m.ncnn.param"
    param.write_text(PERMUTE)
    (tmp_path / "m_ncnn.py").write_text(PNNX_SCRIPT.format(index=0))  # pnnx squeezes the batch axis
    s = FakeSession(tmp_path, x, swap_hw(x))
    got = NCNN(s).run(param, None, "case", ["in0"], ["out0"], batch=batch)
    assert got.arrays["out0"].shape == (1, 8, 16, 16)  # fed as (8, 16, 16), read back with its batch axis
    assert float(np.abs(got.arrays["out0"] - swap_hw(x)).max()) == 0.0
    assert "axes_in=[0]" in s.steps[-1].command


def test_pnnx_models_without_a_batch_axis_are_fed_whole(tmp_path):
    from kb.engines.ncnn import NCNN

    x = np.random.default_rng(2).standard_normal((1, 8, 16, 16)).astype(np.float32)
    param = tmp_path / "m.ncnn.param"
    param.write_text(RELU)
    (tmp_path / "m_ncnn.py").write_text(PNNX_SCRIPT.format(index=233))
    s = FakeSession(tmp_path, x, relu(x))
    got = NCNN(s).run(param, None, "case", ["in0"], ["out0"], batch=True)
    assert got.arrays["out0"].shape == (1, 8, 16, 16)  # a 4-D Mat in, a 4-D Mat out
    assert float(np.abs(got.arrays["out0"] - relu(x)).max()) == 0.0
    assert "axes_in=[None]" in s.steps[-1].command


def test_classic_models_drop_a_leading_one(tmp_path):
    from kb.engines.ncnn import NCNN

    x = np.random.default_rng(3).standard_normal((1, 8, 16, 16)).astype(np.float32)
    param = tmp_path / "hand.param"
    param.write_text(PERMUTE)
    s = FakeSession(tmp_path, x, swap_hw(x))
    got = NCNN(s).run(param, None, "case", ["in0"], ["out0"])
    assert float(np.abs(got.arrays["out0"] - swap_hw(x)).max()) == 0.0
    assert "axes_in=['leading']" in s.steps[-1].command


# An InnerProduct with 2 outputs over 2 inputs; its .bin: the weights' 4-byte type flag (0: float32), 4
# weights, then 2 biases (raw float32).
LINEAR = """7767517
2 2
Input            in0                      0 1 in0
InnerProduct     fc0                      1 1 in0 out0 0=2 1=1 2=4
"""


def test_options_are_set_before_the_layers_are_made(tmp_path):
    """use_fp16_storage (on by default) stores an InnerProduct's weights as fp16 on x86 with F16C: a weight past
    fp16's range comes back changed; with it off, exact. An option this ncnn lacks is one line, not a crash."""
    w = np.array([1e5, 1.0, 0.5, 2.0], dtype=np.float32)
    (tmp_path / "model.bin").write_bytes(np.int32(0).tobytes() + w.tobytes() + np.zeros(2, np.float32).tobytes())
    x = np.array([[1.0, 1.0]], dtype=np.float32)
    want = w.reshape(2, 2) @ x[0]
    got = {}
    for fp16 in (True, False):
        param = tmp_path / "model.param"
        param.write_text(LINEAR)
        feed, out = tmp_path / "in.npz", tmp_path / f"out{fp16}.npz"
        np.savez(feed, in0=x)
        step = run_function("ncnn run", "kb.workers.ncnn:run", timeout=60, param=str(param),
                            bin=str(tmp_path / "model.bin"), feed=str(feed), out=str(out), blobs_in=["in0"],
                            blobs_out={"out0": "out0"}, options={"use_fp16_storage": fp16})
        assert step.ok, step.output[-500:]
        with np.load(out) as z:
            got[fp16] = z["out0"].reshape(-1)
    assert np.allclose(got[False], want), got
    if " f16c" in Path("/proc/cpuinfo").read_text(errors="replace"):  # x86's fp16 weight storage needs F16C
        assert not np.allclose(got[True], want), got
    step, _ = run_worker(tmp_path, RELU, x, options={"use_no_such_thing": True})
    assert not step.ok and "no option 'use_no_such_thing'" in step.output


# x * 1000 after a Linear: 160000 fits float32 but not fp16 (max 65504), which ncnn's Vulkan path stores
# activations in by default; its CPU path on x86 keeps them float32.
BIG = """7767517
3 3
Input            in0                      0 1 in0
InnerProduct     fc0                      1 1 in0 fc0 0=4 1=0 2=64
BinaryOp         mul0                     1 1 fc0 out0 0=2 1=1 2=1000.0
"""


def _big(tmp_path):
    (tmp_path / "big.bin").write_bytes(np.zeros(1, np.uint32).tobytes() + np.full((4, 16), 10, np.float32).tobytes())
    np.savez(tmp_path / "in.npz", in0=np.ones((1, 16), np.float32))
    return dict(param=str(tmp_path / "big.param"), bin=str(tmp_path / "big.bin"), feed=str(tmp_path / "in.npz"),
                out=str(tmp_path / "out.npz"), blobs_in=["in0"], blobs_out={"out0": "out0"})


def test_vulkan_without_a_device_is_refused_not_run_on_the_cpu(tmp_path, monkeypatch):
    """ncnn quietly runs on the CPU when it finds no Vulkan device: a GPU check would then judge the CPU."""
    from kb.engines import ncnn as driver
    from kb.engines.base import Unavailable
    from kb.workers.ncnn import NO_DEVICE

    (tmp_path / "big.param").write_text(BIG)
    monkeypatch.setenv("VK_ICD_FILENAMES", str(tmp_path / "no-such-icd.json"))  # hides every Vulkan driver
    step = run_function("ncnn run", "kb.workers.ncnn:run", timeout=120, options={"use_vulkan_compute": True},
                        **_big(tmp_path))
    assert step.returncode == 1 and NO_DEVICE in step.output, step.output[-500:]
    assert not (tmp_path / "out.npz").exists()
    driver.vulkan_device.cache_clear()
    try:
        s = FakeSession(tmp_path, np.ones((1, 16), np.float32), np.full((1, 4), 160000, np.float32))
        with pytest.raises(Unavailable, match="no Vulkan device"):
            driver.NCNN(s).run(tmp_path / "big.param", tmp_path / "big.bin", "case", ["in0"], ["out0"],
                               options={"use_vulkan_compute": True})
        assert s.steps == []
    finally:
        driver.vulkan_device.cache_clear()


def test_vulkan_runs_on_the_device(tmp_path):
    """Where a device exists (a GPU, or Mesa's lavapipe), the run is the GPU's: fp16 storage overflows."""
    from kb.engines.ncnn import vulkan_device

    if vulkan_device() is None:
        pytest.skip("no Vulkan device here (apt-get install mesa-vulkan-drivers gives a software one)")
    (tmp_path / "big.param").write_text(BIG)
    for gpu, want in ((False, 160000.0), (True, np.inf)):
        step = run_function("ncnn run", "kb.workers.ncnn:run", timeout=120, options={"use_vulkan_compute": gpu},
                            **_big(tmp_path))
        assert step.ok, step.output[-500:]
        with np.load(tmp_path / "out.npz") as z:
            assert z["out0"].tolist() == [[want] * 4]


def test_an_emulated_arm_cpu_runs_ncnns_arm_kernels(tmp_path):
    """ARMv8.2 (cortex-a76) has fp16 arithmetic, which ncnn's CPU path then uses by default: 160000 is inf
    there, right on ARMv8.0 (cortex-a72) and on x86. Skipped where `kb tools build arm64` was not run."""
    from kb.engines.ncnn import NCNN
    from kb.engines.base import Unavailable
    from kb.tools import arm64

    (tmp_path / "big.param").write_text(BIG)
    kw = _big(tmp_path)
    version = NCNN.version()
    try:
        arm64.runner("cortex-a76", "ncnn", version)
    except Unavailable as e:
        pytest.skip(str(e))
    for cpu, want in (("cortex-a72", 160000.0), ("cortex-a76", np.inf)):
        step = run_function("ncnn run", "kb.workers.ncnn:run", timeout=300, **arm64.runner(cpu, "ncnn", version), **kw)
        assert step.ok, step.output[-500:]
        with np.load(tmp_path / "out.npz") as z:
            assert z["out0"].tolist() == [[want] * 4], cpu


def test_an_arm_cpu_that_is_not_set_up_is_unavailable(tmp_path, monkeypatch):
    from kb.engines.base import Unavailable
    from kb.tools import arm64

    monkeypatch.setenv("KB_TOOLS", str(tmp_path))  # no arm64 root here
    with pytest.raises(Unavailable, match="kb tools build arm64"):
        arm64.runner("cortex-a76", "ncnn", "1.0.20261020")



def test_pnnx_is_found_without_importing_torch():
    """The pnnx package's EXEC_PATH, without its import of torch (4 s and hundreds of MB in each pytest worker)."""
    import subprocess
    import sys

    pytest.importorskip("pnnx")
    code = ("import sys; from kb.engines.pnnx import executable; path = executable(); torch = 'torch' in sys.modules; "
            "import pnnx; print(path == pnnx.EXEC_PATH, torch)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.stdout.split() == ["True", "False"], p.stderr[-2000:]
