"""Tiny models from ``transformers``, built offline from configs (random weights from a fixed
seed, never downloaded): what the model tests import, and a broad set of architectures
``tests/frontends/test_hf_architectures.py`` tries.

Each builder returns ``(model, example_inputs, dynamic_shapes, kwargs, other_inputs)``: the
model in eval mode, inputs to import with, the ``torch.export`` dims, fixed keyword arguments
of ``forward``, and inputs of another sequence length (or batch size) to evaluate at.
"""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import torch  # noqa: E402
from torch.export import Dim  # noqa: E402

Example = tuple[torch.nn.Module, tuple[torch.Tensor, ...], object, dict[str, object], tuple[torch.Tensor, ...]]
VOCAB, HIDDEN, LAYERS, HEADS = 128, 64, 2, 4
TEXT = {"vocab_size": VOCAB, "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0}


def _tokens(seed: int, batch: int, length: int) -> torch.Tensor:
    return torch.randint(3, VOCAB, (batch, length), generator=torch.Generator().manual_seed(seed))


def _built(config: Any, model_class: Any, seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    model: torch.nn.Module = model_class(config)
    return model.eval()


def decoder(model_class: Any, config: Any, seed: int = 0, length: int = 12, other: int = 19) -> Example:
    """A decoder-only language model over token ids, the sequence axis dynamic."""
    model = _built(config, model_class, seed)
    ids = _tokens(seed, 2, length)
    return model, (ids,), {"input_ids": {1: Dim("S", max=48)}}, {"use_cache": False}, (_tokens(seed + 1, 2, other),)


def encoder(model_class: Any, config: Any, seed: int = 0, length: int = 12, other: int = 19) -> Example:
    """An encoder over token ids (with its own default attention mask), the sequence axis dynamic."""
    model = _built(config, model_class, seed)
    ids = _tokens(seed, 2, length)
    return model, (ids,), {"input_ids": {1: Dim("S", max=48)}}, {}, (_tokens(seed + 1, 2, other),)


def seq2seq(model_class: Any, config: Any, seed: int = 0) -> Example:
    """An encoder-decoder over source and target ids, both sequence axes dynamic."""
    model = _built(config, model_class, seed)
    source = Dim("S", max=48)
    spec = {"input_ids": {1: source}, "attention_mask": {1: source}, "decoder_input_ids": {1: Dim("T", max=48)}}
    inputs = (_tokens(seed, 2, 10), torch.ones(2, 10, dtype=torch.int64), _tokens(seed + 2, 2, 7))
    other = (_tokens(seed + 3, 2, 13), torch.ones(2, 13, dtype=torch.int64), _tokens(seed + 4, 2, 5))
    return model, inputs, spec, {"use_cache": False}, other


def vision(model_class: Any, config: Any, seed: int = 0, size: int = 32) -> Example:
    """An image model over pixel values, the batch axis dynamic."""
    model = _built(config, model_class, seed)
    g = torch.Generator().manual_seed(seed)
    channels = getattr(config, "num_channels", 3)
    pixels = torch.randn(2, channels, size, size, generator=g)
    return model, (pixels,), {"pixel_values": {0: Dim("B", max=16)}}, {}, (torch.randn(3, channels, size, size, generator=g),)


def gpt2() -> Example:
    import transformers as tr

    config = tr.GPT2Config(n_layer=LAYERS, n_embd=HIDDEN, n_head=HEADS, n_positions=64, **TEXT)
    return decoder(tr.GPT2Model, config)


def llama() -> Example:
    """Llama with grouped-query attention (4 query heads share 2 key/value heads)."""
    import transformers as tr

    config = tr.LlamaConfig(
        num_hidden_layers=LAYERS, hidden_size=HIDDEN, intermediate_size=2 * HIDDEN, num_attention_heads=HEADS,
        num_key_value_heads=2, max_position_embeddings=256, **TEXT,
    )
    return decoder(tr.LlamaModel, config)


def bert() -> Example:
    import transformers as tr

    config = tr.BertConfig(
        num_hidden_layers=LAYERS, hidden_size=HIDDEN, intermediate_size=2 * HIDDEN, num_attention_heads=HEADS,
        max_position_embeddings=64, **TEXT,
    )
    return encoder(tr.BertModel, config)


def vit() -> Example:
    import transformers as tr

    config = tr.ViTConfig(
        num_hidden_layers=LAYERS, hidden_size=HIDDEN, intermediate_size=2 * HIDDEN, num_attention_heads=HEADS,
        image_size=32, patch_size=8,
    )
    return vision(tr.ViTModel, config)


MODELS: dict[str, Callable[[], Example]] = {"gpt2": gpt2, "llama": llama, "bert": bert, "vit": vit}
"""The four models every import check runs on."""


def outputs(model: torch.nn.Module, inputs: tuple[torch.Tensor, ...], kwargs: dict[str, object]) -> tuple[torch.Tensor, ...]:
    """The model's own output tensors, flattened as ``torch.export`` flattens them."""
    with torch.no_grad():
        out = model(*inputs, **kwargs)
    leaves, _ = torch.utils._pytree.tree_flatten(out)
    return tuple(x for x in leaves if isinstance(x, torch.Tensor))


# -- a broad set of architectures of the same kinds ---------------------------------------------

_DECODER = {
    "num_hidden_layers": LAYERS, "hidden_size": HIDDEN, "intermediate_size": 2 * HIDDEN, "num_attention_heads": HEADS,
    "num_key_value_heads": 2, "max_position_embeddings": 256, **TEXT,
}
_ENCODER = {
    "num_hidden_layers": LAYERS, "hidden_size": HIDDEN, "intermediate_size": 2 * HIDDEN, "num_attention_heads": HEADS,
    "max_position_embeddings": 64, **TEXT,
}
_SEQ2SEQ = {
    "d_model": HIDDEN, "encoder_layers": LAYERS, "decoder_layers": LAYERS, "encoder_attention_heads": HEADS,
    "decoder_attention_heads": HEADS, "encoder_ffn_dim": 2 * HIDDEN, "decoder_ffn_dim": 2 * HIDDEN,
    "max_position_embeddings": 64, "decoder_start_token_id": 2, **TEXT,
}
_VISION = {
    "num_hidden_layers": LAYERS, "hidden_size": HIDDEN, "intermediate_size": 2 * HIDDEN, "num_attention_heads": HEADS,
    "image_size": 32, "patch_size": 8,
}

ARCHITECTURES: dict[str, tuple[str, str, str, dict[str, object]]] = {
    # name: (kind, config class, model class, config arguments)
    "Llama": ("decoder", "LlamaConfig", "LlamaModel", _DECODER),
    "Mistral (sliding window)": ("decoder", "MistralConfig", "MistralModel", {**_DECODER, "sliding_window": 8}),
    "Qwen2": ("decoder", "Qwen2Config", "Qwen2Model", _DECODER),
    "Qwen3": ("decoder", "Qwen3Config", "Qwen3Model", {**_DECODER, "head_dim": 16}),
    "Phi (partial rotary)": ("decoder", "PhiConfig", "PhiModel", {**_DECODER, "partial_rotary_factor": 0.5}),
    "Phi-3": ("decoder", "Phi3Config", "Phi3Model", _DECODER),
    "Gemma": ("decoder", "GemmaConfig", "GemmaModel", {**_DECODER, "head_dim": 16}),
    "Gemma 2 (soft-capping, sliding window)": ("decoder", "Gemma2Config", "Gemma2Model", {**_DECODER, "head_dim": 16, "sliding_window": 8}),
    "GPT-2": ("decoder", "GPT2Config", "GPT2Model", {"n_layer": LAYERS, "n_embd": HIDDEN, "n_head": HEADS, "n_positions": 64, **TEXT}),
    "GPT-NeoX (rotary)": ("decoder", "GPTNeoXConfig", "GPTNeoXModel", {**_DECODER, "rotary_pct": 0.25}),
    "GPT-J": ("decoder", "GPTJConfig", "GPTJModel", {"n_layer": LAYERS, "n_embd": HIDDEN, "n_head": HEADS, "n_positions": 64, "rotary_dim": 8, **TEXT}),
    "OPT": ("decoder", "OPTConfig", "OPTModel", {"num_hidden_layers": LAYERS, "hidden_size": HIDDEN, "ffn_dim": 2 * HIDDEN, "num_attention_heads": HEADS, "max_position_embeddings": 64, "word_embed_proj_dim": HIDDEN, **TEXT}),
    "BLOOM (ALiBi)": ("decoder", "BloomConfig", "BloomModel", {"n_layer": LAYERS, "hidden_size": HIDDEN, "n_head": HEADS, **TEXT}),
    "Falcon": ("decoder", "FalconConfig", "FalconModel", {"num_hidden_layers": LAYERS, "hidden_size": HIDDEN, "num_attention_heads": HEADS, **TEXT}),
    "StableLM": ("decoder", "StableLmConfig", "StableLmModel", _DECODER),
    "Starcoder2": ("decoder", "Starcoder2Config", "Starcoder2Model", _DECODER),
    "OLMo": ("decoder", "OlmoConfig", "OlmoModel", _DECODER),
    "Cohere": ("decoder", "CohereConfig", "CohereModel", _DECODER),
    "Mixtral (mixture of experts)": ("decoder", "MixtralConfig", "MixtralModel", {**_DECODER, "num_local_experts": 4, "num_experts_per_tok": 2, "experts_implementation": "batched_mm"}),
    "Qwen2-MoE (shared expert)": ("decoder", "Qwen2MoeConfig", "Qwen2MoeModel", {**_DECODER, "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32, "shared_expert_intermediate_size": 64, "experts_implementation": "batched_mm"}),
    "GPTBigCode (multi-query)": ("decoder", "GPTBigCodeConfig", "GPTBigCodeModel", {"n_layer": LAYERS, "n_embd": HIDDEN, "n_head": HEADS, "n_positions": 64, "multi_query": True, **TEXT}),
    "CodeGen": ("decoder", "CodeGenConfig", "CodeGenModel", {"n_layer": LAYERS, "n_embd": HIDDEN, "n_head": HEADS, "n_positions": 64, "rotary_dim": 8, **TEXT}),
    "Granite": ("decoder", "GraniteConfig", "GraniteModel", _DECODER),
    "OLMo 2": ("decoder", "Olmo2Config", "Olmo2Model", _DECODER),
    "Gemma 3 (text)": ("decoder", "Gemma3TextConfig", "Gemma3TextModel", {**_DECODER, "head_dim": 16, "sliding_window": 8}),
    "BERT": ("encoder", "BertConfig", "BertModel", _ENCODER),
    "RoBERTa": ("encoder", "RobertaConfig", "RobertaModel", {**_ENCODER, "max_position_embeddings": 66}),
    "DistilBERT": ("encoder", "DistilBertConfig", "DistilBertModel", {"n_layers": LAYERS, "dim": HIDDEN, "hidden_dim": 2 * HIDDEN, "n_heads": HEADS, "max_position_embeddings": 64, **TEXT}),
    "ALBERT": ("encoder", "AlbertConfig", "AlbertModel", {**_ENCODER, "embedding_size": 32}),
    "ELECTRA": ("encoder", "ElectraConfig", "ElectraModel", {**_ENCODER, "embedding_size": 32}),
    "DeBERTa-v2": ("encoder", "DebertaV2Config", "DebertaV2Model", _ENCODER),
    "XLM-RoBERTa": ("encoder", "XLMRobertaConfig", "XLMRobertaModel", {**_ENCODER, "max_position_embeddings": 66}),
    "MPNet": ("encoder", "MPNetConfig", "MPNetModel", {**_ENCODER, "max_position_embeddings": 66}),
    "ModernBERT": ("encoder", "ModernBertConfig", "ModernBertModel", {**_ENCODER, "global_attn_every_n_layers": 2, "local_attention": 8}),
    "T5": ("seq2seq", "T5Config", "T5Model", {"d_model": HIDDEN, "d_kv": 16, "d_ff": 2 * HIDDEN, "num_layers": LAYERS, "num_heads": HEADS, "decoder_start_token_id": 0, **TEXT}),
    "BART": ("seq2seq", "BartConfig", "BartModel", _SEQ2SEQ),
    "mBART": ("seq2seq", "MBartConfig", "MBartModel", _SEQ2SEQ),
    "Pegasus": ("seq2seq", "PegasusConfig", "PegasusModel", _SEQ2SEQ),
    "Marian": ("seq2seq", "MarianConfig", "MarianModel", _SEQ2SEQ),
    "ViT": ("vision", "ViTConfig", "ViTModel", _VISION),
    "DeiT": ("vision", "DeiTConfig", "DeiTModel", _VISION),
    "BEiT (relative position bias)": ("vision", "BeitConfig", "BeitModel", {**_VISION, "use_relative_position_bias": True}),
    "DINOv2": ("vision", "Dinov2Config", "Dinov2Model", _VISION),
    "Swin (windows, shifts)": ("vision", "SwinConfig", "SwinModel", {"image_size": 32, "patch_size": 4, "embed_dim": 16, "depths": [1, 1], "num_heads": [2, 2], "window_size": 4}),
    "CLIP (vision tower)": ("vision", "CLIPVisionConfig", "CLIPVisionModel", _VISION),
    "Swin V2": ("vision", "Swinv2Config", "Swinv2Model", {"image_size": 32, "patch_size": 4, "embed_dim": 16, "depths": [1, 1], "num_heads": [2, 2], "window_size": 4}),
    "MobileViT": ("vision", "MobileViTConfig", "MobileViTModel", {"image_size": 32, "hidden_sizes": [32, 48, 64], "neck_hidden_sizes": [8, 8, 16, 16, 24, 32, 64]}),
    "ResNet": ("vision", "ResNetConfig", "ResNetModel", {"embedding_size": 16, "hidden_sizes": [16, 32], "depths": [1, 1], "layer_type": "basic"}),
    "ConvNeXt": ("vision", "ConvNextConfig", "ConvNextModel", {"hidden_sizes": [16, 32], "depths": [1, 1], "num_stages": 2}),
    "ConvNeXt V2": ("vision", "ConvNextV2Config", "ConvNextV2Model", {"hidden_sizes": [16, 32], "depths": [1, 1], "num_stages": 2}),
    "MobileNetV2 (depthwise)": ("vision", "MobileNetV2Config", "MobileNetV2Model", {"image_size": 32, "depth_multiplier": 0.35}),
    "RegNet (grouped conv)": ("vision", "RegNetConfig", "RegNetModel", {"embedding_size": 16, "hidden_sizes": [16, 32], "depths": [1, 1], "groups_width": 8}),
    "EfficientNet": ("vision", "EfficientNetConfig", "EfficientNetModel", {"image_size": 32, "width_coefficient": 0.25, "depth_coefficient": 0.25, "hidden_dim": 320}),
    "Segformer": ("vision", "SegformerConfig", "SegformerModel", {"num_encoder_blocks": 2, "depths": [1, 1], "sr_ratios": [2, 1], "hidden_sizes": [16, 32], "num_attention_heads": [1, 2], "patch_sizes": [7, 3], "strides": [4, 2], "mlp_ratios": [2, 2]}),
}

_KINDS: dict[str, Callable[..., Example]] = {"decoder": decoder, "encoder": encoder, "seq2seq": seq2seq, "vision": vision}


def architecture(name: str) -> Example:
    """The tiny model ``ARCHITECTURES[name]`` with its inputs."""
    import transformers as tr

    kind, config_class, model_class, arguments = ARCHITECTURES[name]
    config = getattr(tr, config_class)(**arguments)
    return _KINDS[kind](getattr(tr, model_class), config)
