"""Write a tiny random-weights GGUF model that real servers load and that asks for ``read_ticket`` with 42.

Run with a Python that has the ``gguf`` package (the real-server environment
built by ``scripts/build_real_server.sh`` has it)::

    python tests/tiny_gguf.py MODEL.gguf TEMPLATE.jinja [--calls]

A llama-architecture model: 2 layers, 64 dimensions, 4 heads, a byte-level
BPE vocabulary (the 256 GPT-2 byte tokens, merges making ``<tool``, ``_call``,
``>\n``, ``42`` and ``42}``, then ``<|endoftext|>``, ``<|im_start|>``,
``<|im_end|>`` and ``</tool_call>``), about
116k parameters, written in well under a second. It embeds the chat
template given (Qwen2.5's, which llama.cpp's server recognises as the Hermes
``<tool_call>`` JSON format), so the server constrains its tool calls with a
grammar and a random model still writes well-formed ones.

A llama model has no output bias, so a constant preference per token is
built through the embeddings: one embedding dimension is the same large
value for every token (it survives the small random layers and the final
norm), and the output row of each preferred token weights that dimension.
Inside the call the server's grammar allows only well-formed JSON, and the
preferences pick ``read_ticket`` and the token ``42}``. Before it, the
tokens ``<tool``, ``_call`` and ``>\n`` (the grammar's trigger) come in
turn, because the server's ``--presence-penalty`` takes 25 off a token once
used (the last 64 tokens of the prompt count too); after the call, the same penalty puts ``<tool`` below ``<|im_end|>``,
so the reply ends after one call: deterministic calls from random weights
(:data:`PREFER` gives the numbers).
"""

from __future__ import annotations

import sys

import gguf
import numpy as np

EMBED, LAYERS, HEADS, FFN, CONTEXT = 64, 2, 4, 128, 16384
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "</tool_call>"]
# Plain tokens built by merges: "<tool", "_call" and ">\n" (the server's grammar trigger "<tool_call>\n"
# must not be one token, or the server wants it preserved), "42" and "42}" (digits are never merged in
# a prompt, so these two only ever come from the model). "Ċ" is GPT-2's character for the byte "\n".
MERGES = ["< t", "<t o", "<to o", "<too l", "_ c", "_c a", "_ca l", "_cal l", "> Ċ", "4 2", "42 }"]


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
    types += [gguf.TokenType.CONTROL] * 3 + [gguf.TokenType.USER_DEFINED]
    return tokens, [int(t) for t in types]


PREFER = {  # target logits; the server runs with --presence-penalty 25 (a token used once loses 25)
    "<tool": 50.0,  # "<tool", "_call", ">\n" in turn (each penalised once used): the grammar's trigger
    "_call": 45.0,
    ">Ċ": 40.0,
    "<|im_end|>": 58.0,  # always in the prompt's tail, so 33: after the call (once "<tool" is used) it ends the reply
    "42}": 30.0,  # the number 42, ending the arguments object
    "r": 30.0,  # read_ticket rather than finish_review (r is often in the prompt's tail: 5 then)
    "f": -30.0,  # llama-cpp-python: "message:" rather than "functions.read_ticket:" (see CALLS below)
    "m": 0.0,
    "{": 10.0,
    "}": 10.0,
    "</tool_call>": 10.0,
    " ": -30.0,  # compact JSON: no whitespace where the grammar allows it
    "\n": -30.0,
    "\t": -30.0,
}
CALLS = {"f": 0.0, "m": -30.0}
"""With ``--calls``: llama-cpp-python's format answers "functions.read_ticket:" rather than "message:"."""
SCALE = 8.0  # the constant dimension's value after the final norm (4 / rms of the embedding)


def _preferences(tokens: list[str], calls: bool = False) -> np.ndarray:
    """The output weights of the constant dimension: a fixed logit preference per token (0 for most)."""
    byte_chars = _bytes_to_unicode()
    index = {t: i for i, t in enumerate(tokens)}
    prefer = np.zeros(len(tokens), dtype=np.float32)
    for token, logit in (PREFER | CALLS if calls else PREFER).items():
        at = index[token] if token in index else index[byte_chars[ord(token)]]
        prefer[at] = logit / SCALE
    return prefer


def write(path: str, template: str, seed: int = 0, calls: bool = False) -> None:
    """Write the model to ``path`` with ``template`` as its chat template (``calls``: see :data:`CALLS`)."""
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
    output[:, 0] = _preferences(tokens, calls)
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
    args = [a for a in sys.argv[1:] if a != "--calls"]
    if len(args) != 2:
        sys.exit("usage: python tests/tiny_gguf.py MODEL.gguf TEMPLATE.jinja [--calls]")
    with open(args[1], encoding="utf-8") as file:
        write(args[0], file.read(), calls="--calls" in sys.argv)
