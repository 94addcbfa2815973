"""KB143: ViT attention, qkv.reshape(B, N, 3, H, D).permute(2, 0, 3, 1, 4) then qkv[0]: the permute moves the batch
to axis 1, and pnnx loses it on the way back (reshape(B, N, C))."""
from torch import nn

from kb.blocks import randn, seeded
from kb.export import Case


class Attention(nn.Module):
    """A patch embedding, then the attention of timm's / insightface's ViT (pick: index, unbind, or separate
    q, k, v projections permuted with (0, 2, 1, 3), which keep the batch first)."""

    def __init__(self, pick="index", dim=16, heads=2):
        super().__init__()
        self.embed = nn.Conv2d(3, dim, 4, stride=4)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.h, self.pick = heads, pick

    def forward(self, x):
        x = self.embed(x).flatten(2).transpose(1, 2)
        B, N, C = x.shape
        if self.pick == "separate":
            q, k, v = (t.reshape(B, N, self.h, C // self.h).permute(0, 2, 1, 3) for t in self.qkv(x).chunk(3, -1))
        else:
            qkv = self.qkv(x).reshape(B, N, 3, self.h, C // self.h).permute(2, 0, 3, 1, 4)
            q, k, v = qkv.unbind(0) if self.pick == "unbind" else (qkv[0], qkv[1], qkv[2])
        a = ((q @ k.transpose(-2, -1)) * 0.35).softmax(-1)
        return self.proj((a @ v).transpose(1, 2).reshape(B, N, C))


def cases():
    x = randn(1, 3, 16, 16)
    yield Case("vit-attention", seeded(Attention), (x,), dynamo=False, torchscript=True, ways=True)
    yield Case("separate-qkv", seeded(lambda: Attention("separate")), (x,), dynamo=False, torchscript=True, trigger=False,
               rewrites="vit-attention")


def variants():
    x = randn(1, 3, 16, 16)
    yield Case("unbind", seeded(lambda: Attention("unbind")), (x,), dynamo=False)
    yield Case("unbind-dynamo", seeded(lambda: Attention("unbind")), (x,), opset=18, dynamo=True,
               export_kwargs={"external_data": False})
