"""Write a tiny random-weights GGUF model that real servers load and that asks for ``read_ticket`` with 42.

Run with a Python that has the ``gguf`` package (the real-server environment
built by ``scripts/build_real_server.sh`` has it)::

    python tests/tiny_gguf.py MODEL.gguf TEMPLATE.jinja

A llama-architecture model: 2 layers, 64 dimensions, 4 heads, a byte-level
BPE vocabulary (the 256 GPT-2 byte tokens, a few merges, ``<|endoftext|>``,
``<|im_start|>``, ``<|im_end|>``, ``<tool_call>``, ``</tool_call>``), about
116k parameters, written in well under a second. It embeds the chat
template given (Qwen2.5's, which llama.cpp's server recognises as the Hermes
``<tool_call>`` JSON format), so the server constrains its tool calls with a
grammar and a random model still writes well-formed ones.

A llama model has no output bias, so a constant preference per token is
built through the embeddings: one embedding dimension is the same large
value for every token (it survives the small random layers and the final
norm), and the output row of each preferred token weights that dimension.
With the server's ``--presence-penalty`` (a token used once loses its
preference), the model writes ``<tool_call>``, then picks ``read_ticket``
and the number 42, then ends: deterministic calls from random weights.
"""

from __future__ import annotations

import sys

import gguf
import numpy as np

EMBED, LAYERS, HEADS, FFN, CONTEXT = 64, 2, 4, 128, 2048
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"]
MERGES = ["Ġ t", "Ġ a", "i n", "e r", "o n"]


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible map from bytes to printable characters."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    chars = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return dict(zip(printable, (chr(c) for c in chars), strict=True))


def _vocabulary() -> tuple[list[str], list[int]]:
    byte_chars = _bytes_to_unicode()
    tokens = [byte_chars[b] for b in range(256)]
    types = [gguf.TokenType.NORMAL] * 256
    for merge in MERGES:
        tokens.append(merge.replace(" ", ""))
        types.append(gguf.TokenType.NORMAL)
    tokens += SPECIAL
    types += [gguf.TokenType.CONTROL] * 3 + [gguf.TokenType.USER_DEFINED] * 2
    return tokens, [int(t) for t in types]


def _preferences(tokens: list[str]) -> np.ndarray:
    """A constant logit preference per token (0 for most)."""
    byte_chars = _bytes_to_unicode()
    index = {t: i for i, t in enumerate(tokens)}
    prefer = np.zeros(len(tokens), dtype=np.float32)

    def char(c: str) -> int:
        return index[byte_chars[ord(c)]]

    prefer[index["<tool_call>"]] = 6.0
    prefer[index["</tool_call>"]] = 4.0
    prefer[index["<|im_end|>"]] = 3.0
    for c, value in {"{": 3.0, '"': 3.0, "r": 3.0, "4": 3.0, "2": 2.5, "}": 2.0, ":": 2.0, ",": 2.0}.items():
        prefer[char(c)] = value
    for c in " \n\t\r":
        prefer[char(c)] = -4.0
    return prefer


def write(path: str, template: str, seed: int = 0) -> None:
    """Write the model to ``path`` with ``template`` as its chat template."""
    rng = np.random.default_rng(seed)
    tokens, types = _vocabulary()
    vocab = len(tokens)
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_name("labkit-tiny")
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(EMBED)
    writer.add_block_count(LAYERS)
    writer.add_feed_forward_length(FFN)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(HEADS)
    writer.add_rope_dimension_count(EMBED // HEADS)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(vocab)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(MERGES)
    writer.add_bos_token_id(tokens.index("<|endoftext|>"))
    writer.add_eos_token_id(tokens.index("<|im_end|>"))
    writer.add_eot_token_id(tokens.index("<|im_end|>"))
    writer.add_add_bos_token(False)
    writer.add_chat_template(template)

    def small(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    embedding = small(vocab, EMBED)
    embedding[:, 0] = 4.0  # the constant dimension that carries the preferences
    output = small(vocab, EMBED)
    output[:, 0] = _preferences(tokens)
    writer.add_tensor("token_embd.weight", embedding)
    writer.add_tensor("output_norm.weight", np.ones(EMBED, dtype=np.float32))
    writer.add_tensor("output.weight", output)
    for layer in range(LAYERS):
        block = f"blk.{layer}"
        writer.add_tensor(f"{block}.attn_norm.weight", np.ones(EMBED, dtype=np.float32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(f"{block}.{name}.weight", small(EMBED, EMBED))
        writer.add_tensor(f"{block}.ffn_norm.weight", np.ones(EMBED, dtype=np.float32))
        writer.add_tensor(f"{block}.ffn_gate.weight", small(FFN, EMBED))
        writer.add_tensor(f"{block}.ffn_up.weight", small(FFN, EMBED))
        writer.add_tensor(f"{block}.ffn_down.weight", small(EMBED, FFN))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python tests/tiny_gguf.py MODEL.gguf TEMPLATE.jinja")
    with open(sys.argv[2], encoding="utf-8") as file:
        write(sys.argv[1], file.read())
