"""Writes a Llama-style model of GPT-2 124M's size with random weights (transformers' own
initialisation, seed 0) for `llama_decode`: hidden 768, 12 layers, 12 query heads over 4
key/value heads of 64, SwiGLU 2048, GPT-2's vocabulary (50257), untied head, 1024 positions.

    python3 benches/llama_random.py OUT_DIR
"""
import sys

import torch
from transformers import LlamaConfig, LlamaForCausalLM

torch.manual_seed(0)
config = LlamaConfig(
    hidden_size=768,
    intermediate_size=2048,
    num_hidden_layers=12,
    num_attention_heads=12,
    num_key_value_heads=4,
    head_dim=64,
    vocab_size=50257,
    max_position_embeddings=1024,
    tie_word_embeddings=False,
)
LlamaForCausalLM(config).save_pretrained(sys.argv[1], safe_serialization=True)
