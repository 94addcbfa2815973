"""Real implementations for the architecture bench: transformers and timm models, as users export them.

Imported only in the bench's own venv (bench/arch/real_env.py: .kb/arch-real-venv). Every model is built
from its Config class (transformers) or timm.create_model(pretrained=False): no hub download. Small
widths and depths, random weights seeded by the model's name (as models.build does), norms perturbed
(and BatchNorm statistics measured, for the CNNs) with the hand-written families' helpers
(models/base.py), so that a wrongly computed layer shows in the outputs.

Two deviations from a user's export, both forced by the bench's pipelines, which feed float32 only:
  - the text models take their token ids as float32 and cast them to int64 first (a Cast before the
    embedding Gather); the graph after that Cast is the model's own. pnnx stops on that Cast ("layer
    Tensor.to not exists or registered"), so each text model is also exported fed `inputs_embeds`
    (the "-embeds" models: no Cast, no word-embedding Gather);
  - every model is wrapped to return a tuple of tensors (HF models return ModelOutput dicts), the
    outputs a user's export names (logits, last_hidden_state, ...).

torchvision (which timm imports) is the PyPI wheel for torch 2.13, built against CUDA: its C++ ops
cannot load next to the CPU torch here, and its Python import then fails registering fake kernels
for two ops that do not exist (transformers and timm both import it when it is installed).
`_torchvision_op_schemas` defines those two schemas (torchvision::nms, torchvision::qnms), with no
kernel, when this module is imported; nothing below calls them.

`REAL` lists the models: name -> (builder, kind), kind as in models.FAMILIES ("cnn": label.py also
runs mnnquant). real.py reads its keys without importing torch: keep it a dict literal.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from models.base import Model, _perturb_norms, _trained_like  # noqa: E402


def _torchvision_op_schemas() -> None:
    """See the module docstring: the two op schemas torchvision's Python import needs, without kernels."""
    if not hasattr(torch.ops, "torchvision") or not hasattr(torch.ops.torchvision, "nms"):
        lib = torch.library.Library("torchvision", "DEF")
        for op in ("nms", "qnms"):
            lib.define(f"{op}(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        _torchvision_op_schemas.lib = lib  # keep the registration alive


_torchvision_op_schemas()  # before anything imports transformers or timm

SEQ, VOCAB, IMAGE = 16, 1000, 64


class Outputs(nn.Module):
    """model(x, **kwargs) -> tuple(out[k] for k in keys); token ids come in as float32 (see above)."""

    def __init__(self, model: nn.Module, keys: tuple[str, ...], ids: bool = False, embeds: bool = False, **kwargs):
        super().__init__()
        self.model, self.keys, self.ids, self.embeds, self.kwargs = model.eval(), keys, ids, embeds, kwargs

    def forward(self, x):
        if self.embeds:
            out = self.model(inputs_embeds=x, **self.kwargs)
        else:
            out = self.model(x.long() if self.ids else x, **self.kwargs)
        return (out,) if isinstance(out, torch.Tensor) else tuple(out[k] for k in self.keys)  # timm: one tensor


def _text(model: nn.Module, keys=("last_hidden_state",), **kwargs) -> Model:
    ids = torch.randint(0, VOCAB, (1, SEQ)).float()
    return Model(Outputs(_perturb_norms(model), keys, ids=True, **kwargs), (ids,), ["input_ids"], list(keys))


def _embeds(build: Callable[[], Model]) -> Callable[[], Model]:
    """The same text model fed `inputs_embeds` (the token embedding looked up outside the graph, as MNN-LLM
    style deployments do): no Cast, no word-embedding Gather; everything after is the model's own."""
    def embedded() -> Model:
        m = build()
        x = torch.randn(1, SEQ, m.module.model.get_input_embeddings().embedding_dim)
        wrapped = Outputs(m.module.model, m.module.keys, embeds=True, **m.module.kwargs)
        return Model(wrapped, (x,), ["inputs_embeds"], m.output_names)
    return embedded


def _image(model: nn.Module, keys=("logits",), size: int = IMAGE, bn: bool = False) -> Model:
    x = torch.randn(1, 3, size, size)
    wrapped = Outputs(model, keys)
    wrapped = _trained_like(wrapped, x) if bn else _perturb_norms(wrapped)
    return Model(wrapped, (x,), ["pixel_values"], list(keys))


def _audio(model: nn.Module, x: torch.Tensor, keys=("last_hidden_state",)) -> Model:
    return Model(Outputs(_perturb_norms(model), keys), (x,), ["input_values"], list(keys))


_BERTISH = dict(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                intermediate_size=128, max_position_embeddings=64)


def bert() -> Model:
    import transformers as t

    return _text(t.BertModel(t.BertConfig(**_BERTISH)), ("last_hidden_state", "pooler_output"))


def roberta() -> Model:
    import transformers as t

    return _text(t.RobertaModel(t.RobertaConfig(**_BERTISH, pad_token_id=1)), ("last_hidden_state", "pooler_output"))


def distilbert() -> Model:
    import transformers as t

    cfg = t.DistilBertConfig(vocab_size=VOCAB, dim=64, n_layers=2, n_heads=4, hidden_dim=128,
                             max_position_embeddings=64)
    return _text(t.DistilBertModel(cfg))


def gpt2() -> Model:
    import transformers as t

    cfg = t.GPT2Config(vocab_size=VOCAB, n_embd=64, n_layer=2, n_head=4, n_positions=64, use_cache=False,
                       bos_token_id=0, eos_token_id=0)
    return _text(t.GPT2LMHeadModel(cfg), ("logits",), use_cache=False)


def llama() -> Model:
    import transformers as t

    cfg = t.LlamaConfig(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64, use_cache=False)
    return _text(t.LlamaForCausalLM(cfg), ("logits",), use_cache=False)


def t5_encoder() -> Model:
    import transformers as t

    cfg = t.T5Config(vocab_size=VOCAB, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4)
    return _text(t.T5EncoderModel(cfg))


def vit() -> Model:
    import transformers as t

    cfg = t.ViTConfig(image_size=IMAGE, patch_size=16, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                      intermediate_size=128, num_labels=10)
    return _image(t.ViTForImageClassification(cfg))


def deit() -> Model:
    import transformers as t

    cfg = t.DeiTConfig(image_size=IMAGE, patch_size=16, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                       intermediate_size=128, num_labels=10)
    return _image(t.DeiTForImageClassificationWithTeacher(cfg))


def swin() -> Model:
    import transformers as t

    cfg = t.SwinConfig(image_size=IMAGE, patch_size=4, embed_dim=24, depths=[2, 2], num_heads=[2, 4], window_size=4,
                       num_labels=10)
    return _image(t.SwinForImageClassification(cfg))


def convnext() -> Model:
    import transformers as t

    cfg = t.ConvNextConfig(hidden_sizes=[16, 32, 64, 128], depths=[1, 1, 2, 1], num_labels=10)
    return _image(t.ConvNextForImageClassification(cfg))


def mobilevit() -> Model:
    import transformers as t

    cfg = t.MobileViTConfig(image_size=IMAGE, hidden_sizes=[32, 48, 64], neck_hidden_sizes=[8, 16, 24, 32, 48, 64, 160],
                            num_labels=10)
    return _image(t.MobileViTForImageClassification(cfg), bn=True)


def segformer() -> Model:
    import transformers as t

    cfg = t.SegformerConfig(hidden_sizes=[16, 32, 40, 64], depths=[1, 1, 1, 1], num_attention_heads=[1, 2, 2, 4],
                            decoder_hidden_size=64, num_labels=5)
    return _image(t.SegformerForSemanticSegmentation(cfg))


def detr() -> Model:
    import transformers as t

    backbone = t.ResNetConfig(embedding_size=16, hidden_sizes=[16, 32, 64, 128], depths=[1, 1, 1, 1],
                              layer_type="basic", out_features=["stage4"])
    cfg = t.DetrConfig(backbone_config=backbone, use_timm_backbone=False, use_pretrained_backbone=False, d_model=64,
                       encoder_layers=1, decoder_layers=1, encoder_ffn_dim=128, decoder_ffn_dim=128,
                       encoder_attention_heads=4, decoder_attention_heads=4, num_queries=10, num_labels=5)
    return _image(t.DetrForObjectDetection(cfg), ("logits", "pred_boxes"), bn=True)


def wav2vec2() -> Model:
    import transformers as t

    cfg = t.Wav2Vec2Config(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                           conv_dim=(32, 32, 32), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3),
                           num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4)
    return _audio(t.Wav2Vec2Model(cfg), torch.randn(1, 4000))


def hubert() -> Model:
    import transformers as t

    cfg = t.HubertConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                         conv_dim=(32, 32, 32), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3),
                         num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4)
    return _audio(t.HubertModel(cfg), torch.randn(1, 4000))


def whisper_encoder() -> Model:
    import transformers as t

    cfg = t.WhisperConfig(vocab_size=VOCAB, num_mel_bins=16, d_model=64, encoder_layers=2, encoder_attention_heads=4,
                          decoder_layers=1, decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128,
                          max_source_positions=50, max_target_positions=32, pad_token_id=0, bos_token_id=0,
                          eos_token_id=0, decoder_start_token_id=0)
    m = _audio(t.WhisperModel(cfg).get_encoder(), torch.randn(1, 16, 100))
    m.input_names = ["input_features"]
    return m


def _timm(name: str, **kwargs) -> Callable[[], Model]:
    def build() -> Model:
        import timm

        m = timm.create_model(name, pretrained=False, num_classes=10, **kwargs)
        return _image(m, bn=True)
    return build


# name -> (builder, kind)
REAL: dict[str, tuple[Callable[[], Model], str]] = {
    "hf-bert": (bert, "other"),
    "hf-distilbert": (distilbert, "other"),
    "hf-roberta": (roberta, "other"),
    "hf-gpt2": (gpt2, "other"),
    "hf-llama": (llama, "other"),
    "hf-t5-encoder": (t5_encoder, "other"),
    "hf-bert-embeds": (_embeds(bert), "other"),
    "hf-distilbert-embeds": (_embeds(distilbert), "other"),
    "hf-roberta-embeds": (_embeds(roberta), "other"),
    "hf-gpt2-embeds": (_embeds(gpt2), "other"),
    "hf-llama-embeds": (_embeds(llama), "other"),
    "hf-t5-encoder-embeds": (_embeds(t5_encoder), "other"),
    "hf-vit": (vit, "other"),
    "hf-deit": (deit, "other"),
    "hf-swin": (swin, "other"),
    "hf-convnext": (convnext, "other"),
    "hf-mobilevit": (mobilevit, "other"),
    "hf-segformer": (segformer, "other"),
    "hf-detr": (detr, "other"),
    "hf-wav2vec2": (wav2vec2, "other"),
    "hf-hubert": (hubert, "other"),
    "hf-whisper-encoder": (whisper_encoder, "other"),
    "timm-resnet18": (_timm("resnet18"), "cnn"),
    "timm-efficientnet-b0": (_timm("efficientnet_b0"), "cnn"),
    "timm-mobilenetv3": (_timm("mobilenetv3_small_100"), "cnn"),
    "timm-convnext-atto": (_timm("convnext_atto"), "other"),
}


def build(name: str) -> Model:
    """The model, with weights seeded by its name (the same on every run)."""
    import zlib

    torch.manual_seed(zlib.crc32(name.encode()))
    return REAL[name][0]()
