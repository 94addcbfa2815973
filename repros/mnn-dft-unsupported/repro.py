"""KB175: torch.fft (rfft, fft, irfft, rfft2, rfftn) has no TorchScript export; the dynamo exporter writes it as an
ONNX DFT node, and mnnconvert has no rule for DFT: "These Op Not Support: ONNX::DFT", "Converted Failed!", no
model. The same transform written as a MatMul with constant cosine and sine matrices converts and matches."""

import math

import torch
from torch import nn

from kb.blocks import ONE_FILE, randn, seeded
from kb.export import Case

N = 32  # samples per frame


def frames(seed=1, n=N):
    """Four frames of a signal, (1, 4, n)."""
    return (randn(1, 4, n, seed=seed),)


class PowerSpectrum(nn.Module):
    """|rfft(x)|^2 over the last axis, an audio front end's spectrum (written as re^2 + im^2: no Abs)."""

    def forward(self, x):
        return torch.view_as_real(torch.fft.rfft(x, dim=-1)).pow(2).sum(-1)


class PowerSpectrumMatMul(nn.Module):
    """The workaround: the same spectrum with the DFT as two MatMuls with constant cos / -sin matrices."""

    def __init__(self, n=N):
        super().__init__()
        k = torch.arange(n // 2 + 1, dtype=torch.float64).unsqueeze(0)
        t = torch.arange(n, dtype=torch.float64).unsqueeze(1)
        angle = 2 * math.pi * t * k / n  # (n, n // 2 + 1)
        self.register_buffer("cos", torch.cos(angle).float())
        self.register_buffer("sin", -torch.sin(angle).float())

    def forward(self, x):
        re, im = x @ self.cos, x @ self.sin
        return re * re + im * im




class FourierUnit(nn.Module):
    """LaMa's fast Fourier convolution unit: rfftn over (H, W), a 1x1 conv on the stacked real and imaginary
    channels, ReLU, irfftn back."""

    def __init__(self, c=4):
        super().__init__()
        self.conv = nn.Conv2d(2 * c, 2 * c, 1)

    def forward(self, x):
        b, c, h, w = x.shape
        spec = torch.view_as_real(torch.fft.rfftn(x, dim=(-2, -1), norm="ortho"))  # (b, c, h, w // 2 + 1, 2)
        spec = spec.permute(0, 1, 4, 2, 3).reshape(b, 2 * c, h, w // 2 + 1)
        spec = torch.relu(self.conv(spec)).reshape(b, c, 2, h, w // 2 + 1).permute(0, 1, 3, 4, 2).contiguous()
        return torch.fft.irfftn(torch.view_as_complex(spec), s=(h, w), dim=(-2, -1), norm="ortho")


class OnnxRfft(torch.autograd.Function):
    """rfft over the last axis as (re, im), exported by the TorchScript exporter as the ONNX DFT node the dynamo
    exporter writes (Unsqueeze to a trailing real axis, DFT onesided): the same graph without dynamo's export cost."""

    @staticmethod
    def forward(ctx, x, rank, onesided):
        f = torch.fft.rfft if onesided else torch.fft.fft
        return torch.view_as_real(f(x if onesided else x.to(torch.complex64), dim=-1))

    @staticmethod
    def symbolic(g, x, rank, onesided):
        axes = g.op("Constant", value_t=torch.tensor([-1], dtype=torch.int64))
        return g.op("DFT", g.op("Unsqueeze", x, axes), axis_i=rank - 1, onesided_i=onesided)


class Spectrum(nn.Module):
    """The spectrum through OnnxRfft: power (re^2 + im^2) or magnitude (its square root)."""

    def __init__(self, rank=3, onesided=1, power=True):
        super().__init__()
        self.rank, self.onesided, self.power = rank, onesided, power

    def forward(self, x):
        p = OnnxRfft.apply(x, self.rank, self.onesided).pow(2).sum(-1)
        return p if self.power else p.sqrt()


class Spectrogram(nn.Module):
    """torch.stft with a Hann window (ONNX STFT, not DFT), magnitude squared."""

    def forward(self, x):
        spec = torch.stft(x, 16, 4, window=torch.hann_window(16), center=False, return_complex=False)
        return spec.pow(2).sum(-1)


def dyn(name, module, inputs, opset=18, **kw):
    return Case(name, module, inputs, opset=opset, dynamo=True, export_kwargs=ONE_FILE, **kw)


def cases():
    x = frames()
    yield dyn("rfft", PowerSpectrum(), x)
    # Workaround: the DFT as MatMuls with constant matrices (the same function, judged against rfft's output).
    yield Case("rfft-matmul", PowerSpectrumMatMul(), x, opset=17, dynamo=False, trigger=False, rewrites="rfft")
    # Control: torch.stft, which both exporters write as one ONNX STFT node (no DFT).
    yield Case("stft", Spectrogram(), (randn(1, 64),), opset=17, dynamo=False, trigger=False)


def ts(name, module, inputs, opset=17, **kw):
    return Case(name, module, inputs, opset=opset, dynamo=False, **kw)


def variants():
    # LaMa's Fourier unit through the dynamo exporter (rfftn and irfftn: two DFT nodes each). Each dynamo export
    # costs seconds, so the other variants write the same DFT node through the TorchScript exporter.
    yield dyn("fourier-unit", seeded(FourierUnit), (randn(1, 4, 8, 8, seed=7),))
    # The same DFT node written by the TorchScript exporter through OnnxRfft: opsets, ranks, lengths.
    yield ts("rfft-opset17", Spectrum(), frames(seed=2))
    yield ts("rfft-opset18", Spectrum(), frames(seed=2), opset=18)
    yield ts("magnitude-opset17", Spectrum(power=False), frames(seed=3))
    yield ts("complex-fft", Spectrum(onesided=0), frames(seed=4))
    yield ts("rfft-rank2-long", Spectrum(rank=2), (randn(2, 256, seed=6),))
    yield ts("rfft-rank4", Spectrum(rank=4), (randn(1, 3, 8, 16, seed=8),))
    yield ts("rfft-odd-length", Spectrum(), (randn(1, 4, 31, seed=10),))
    # Near misses: the DFT as MatMuls, and torch.stft (an STFT node) at opset 18.
    yield ts("matmul-near-miss", PowerSpectrumMatMul(), frames(seed=2))
    yield ts("stft-opset18-near-miss", Spectrogram(), (randn(1, 64, seed=9),), opset=18)
