"""Write tiny GGUF models that real servers load: random weights that ask for ``read_ticket`` with 42, or a reviewer.

Run with a Python that has the ``gguf`` package (the real-server environment
built by ``scripts/build_real_server.sh`` has it)::

    python tests/tiny_gguf.py MODEL.gguf TEMPLATE.jinja [--calls | --reviewer]

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

**The reviewer** (``--reviewer``, :func:`write_reviewer`): a model whose replies
follow the conversation, so a real server runs the whole review to
``Completed``. Nothing in it is random; every weight is set by hand (78,144
weights, 329 of them not zero; 289 tokens; one layer):

* *Its first reply* calls ``read_ticket`` with 42; *after the ticket's text*
  (a tool result) it calls ``finish_review`` with 42; *after the finish
  result* it answers with a sentence. It sees the tool results, not a
  counter: a result that is not the ticket text (``NotFound``) does not
  move it on.
* *Markers.* The vocabulary has merges that make ``Ticket`` (the first word of
  the ticket's text) and ``Review`` (the first word of ``finish_review``'s
  result) single tokens, with and without a leading space. Neither word, so
  capitalised, is in the instructions, the prompt, the tool descriptions or
  the chat template. Their embeddings carry a 1 in a dimension of their own
  (``SEEN_TICKET``, ``SEEN_FINISH``).
* *Attention that looks back.* One layer. Head 0's query is constant (it
  reads the constant dimension every token has) and its key is large only at
  a ``Ticket`` token, so the score there is about 50 and 0 elsewhere: if the
  ticket text is anywhere in the context, softmax puts all the weight on it.
  Its value is that token's ``SEEN_TICKET`` (1), written into the residual
  dimension ``READ``; with no marker every value is 0, so ``READ`` is exactly
  0. Head 1 does the same for ``Review`` into ``FINISHED``. Query and key use
  the last rotary pair of the head with a rotary base of 1e8, so the rotation
  is below 2e-3 rad at 16k tokens and the score does not depend on distance.
* *The reply, a chain of tokens.* Every token the model writes is one of a
  few generate-only vocabulary entries (no merge makes them, so a prompt
  never contains them), and the output weights map each one to the next, a
  bigram table read from the current token's own dimension: ``<tool``,
  ``_call``, ``>\n`` (the grammar's trigger, as above), ``{"name": "``, the
  tool's name, ``", "arguments": {"input": ``, ``42}}\n``,
  ``</tool_call>``, end of turn: exactly the text the chat template writes
  for a call. Two steps branch: after the prompt's last ``\n`` the reply
  starts ``<tool`` unless ``FINISHED``, else the sentence :data:`ANSWER`;
  after ``{"name": "`` the name is ``read_ticket`` unless ``READ``, else
  ``finish_review``. Every decision wins by a logit margin of 60 or more
  (the server's presence penalty takes 25), so greedy and sampled replies
  are the same.

The reviewer follows the Qwen2.5 chat template (``<tool_response>`` blocks
carry the results), which llama-server renders. llama-cpp-python's
``chatml-function-calling`` format does not put tool results in its prompt
at all (its template has no branch for the ``tool`` role) and writes calls as
``functions.NAME:`` under its own grammar, so there the reviewer is lost
(seen: four ``finish_review`` calls with made-up ids, then ``ToolBudget``;
streamed, that server cannot send an automatic tool call at all).
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
    printable = (
        list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    )
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


# -- the reviewer: a model whose replies follow the conversation -------------------------

# Residual dimensions (EMBED = 64): a constant, two marker flags read by attention, the two flags
# attention writes, then one dimension per token of the reply (the current token's identity).
CONST, SEEN_TICKET, SEEN_FINISH, READ, FINISHED, FIRST_CHAIN = range(6)
ROPE_BASE = 1e8  # the last rotary pair turns by 1e8 ** (-14 / 16) = 1e-7 rad per token: no distance effect
ROPE_PAIR = 14  # the head dimension that query and key use (pair 7 of 8, the slowest)

ANSWER = "Review of ticket 42 finished."
"""The reviewer's last reply, once it has seen finish_review's result."""
MARKERS = {"Ticket": SEEN_TICKET, "Review": SEEN_FINISH}
"""The first word of the ticket's text and of finish_review's result (see TICKET_TEXT in labkit.loops.review)."""
NAME_OPEN, ARGS_OPEN, ARGS_CLOSE = '{"name": "', '", "arguments": {"input": ', "42}}\n"
GENERATED = [NAME_OPEN, "read_ticket", "finish_review", ARGS_OPEN, ARGS_CLOSE, ANSWER]
"""Vocabulary entries no merge makes: only the model writes them."""
CHAIN = {  # current token -> the next one (two of them branch, see _reviewer_output)
    "\n": "<tool",
    "<tool": "_call",
    "_call": ">\n",
    ">\n": NAME_OPEN,
    NAME_OPEN: "read_ticket",
    "read_ticket": ARGS_OPEN,
    "finish_review": ARGS_OPEN,
    ARGS_OPEN: ARGS_CLOSE,
    ARGS_CLOSE: "</tool_call>",
    "</tool_call>": "<|im_end|>",
    ANSWER: "<|im_end|>",
}
STEP = 30.0  # the logit of the next token per unit of the normalised residual (about 4 to 5.7 here)


def _marker_merges(word: str) -> list[str]:
    """Merges that make ``word`` and ``Ġword`` (the word after a space) single tokens."""
    merges = [f"{word[:i]} {word[i]}" for i in range(1, len(word))]
    return merges + [f"Ġ {word}"]


def _reviewer_vocabulary() -> tuple[list[str], list[int], list[str]]:
    byte_chars = _bytes_to_unicode()
    merges = MERGES + [m for word in MARKERS for m in _marker_merges(word)]
    tokens = [byte_chars[b] for b in range(256)] + [m.replace(" ", "") for m in merges]
    tokens += ["".join(byte_chars[b] for b in text.encode()) for text in GENERATED]
    types = [int(gguf.TokenType.NORMAL)] * len(tokens)
    tokens += SPECIAL
    types += [int(gguf.TokenType.CONTROL)] * 3 + [int(gguf.TokenType.USER_DEFINED)]
    return tokens, types, merges


def _reviewer_weights(tokens: list[str]) -> dict[str, np.ndarray]:
    """Every weight of the reviewer, set by hand (see the module docstring)."""
    byte_chars = _bytes_to_unicode()

    def token(text: str) -> int:  # a text as the vocabulary spells it (GPT-2 byte characters)
        return tokens.index(text if text in SPECIAL else "".join(byte_chars[b] for b in text.encode()))

    vocab = len(tokens)
    chain = sorted({token(t) for t in CHAIN})
    onehot = {t: FIRST_CHAIN + i for i, t in enumerate(chain)}
    assert FIRST_CHAIN + len(chain) <= EMBED

    embedding = np.zeros((vocab, EMBED), dtype=np.float32)
    embedding[:, CONST] = 4.0
    for t, dim in onehot.items():
        embedding[t, dim] = 4.0
    for word, dim in MARKERS.items():
        for spelled in (word, "Ġ" + word):
            embedding[tokens.index(spelled), dim] = 4.0

    # A token with one flag set is normalised to 4 / rms = 5.657 in both dimensions (rms of [4, 4, 0...]).
    unit = 4.0 / np.sqrt(32.0 / EMBED)
    head = EMBED // HEADS
    q, k, v, o = (np.zeros((EMBED, EMBED), dtype=np.float32) for _ in range(4))
    for h, (seen, flag) in enumerate(((SEEN_TICKET, READ), (SEEN_FINISH, FINISHED))):
        q[h * head + ROPE_PAIR, CONST] = 2.5  # constant query
        k[h * head + ROPE_PAIR, seen] = 2.5  # score 2.5 * 2.5 * 5.657**2 / sqrt(16) = 50 at a marker, 0 elsewhere
        v[h * head, seen] = 1.0 / unit  # the value: 1 at a marker, 0 elsewhere
        o[flag, h * head] = 4.0  # the flag, on the same scale as the embedding's dimensions

    output = np.zeros((vocab, EMBED), dtype=np.float32)
    for current, following in CHAIN.items():
        output[token(following), onehot[token(current)]] = STEP
    # The two branches: the flag takes the first choice away and doubles the second.
    for current, first, second, flag in (
        ("\n", "<tool", ANSWER, FINISHED),
        (NAME_OPEN, "read_ticket", "finish_review", READ),
    ):
        output[token(first), flag] = -STEP
        output[token(second), onehot[token(current)]] = STEP / 2
        output[token(second), flag] = STEP / 2
    return {"token_embd.weight": embedding, "output.weight": output, "q": q, "k": k, "v": v, "o": o}


def write_reviewer(path: str, template: str) -> None:
    """Write the reviewer to ``path`` with ``template`` as its chat template (see the module docstring)."""
    tokens, types, merges = _reviewer_vocabulary()
    weights = _reviewer_weights(tokens)
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_name("labkit-tiny-reviewer")
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(EMBED)
    writer.add_block_count(1)
    writer.add_feed_forward_length(FFN)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(HEADS)
    writer.add_rope_dimension_count(EMBED // HEADS)
    writer.add_rope_freq_base(ROPE_BASE)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(len(tokens))
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    writer.add_bos_token_id(tokens.index("<|endoftext|>"))
    writer.add_eos_token_id(tokens.index("<|im_end|>"))
    writer.add_eot_token_id(tokens.index("<|im_end|>"))
    writer.add_add_bos_token(False)
    writer.add_chat_template(template)
    ones = np.ones(EMBED, dtype=np.float32)
    writer.add_tensor("token_embd.weight", weights["token_embd.weight"])
    writer.add_tensor("output_norm.weight", ones)
    writer.add_tensor("output.weight", weights["output.weight"])
    writer.add_tensor("blk.0.attn_norm.weight", ones)
    for name, key in (("attn_q", "q"), ("attn_k", "k"), ("attn_v", "v"), ("attn_output", "o")):
        writer.add_tensor(f"blk.0.{name}.weight", weights[key])
    writer.add_tensor("blk.0.ffn_norm.weight", ones)  # the feed-forward block adds nothing
    writer.add_tensor("blk.0.ffn_gate.weight", np.zeros((FFN, EMBED), dtype=np.float32))
    writer.add_tensor("blk.0.ffn_up.weight", np.zeros((FFN, EMBED), dtype=np.float32))
    writer.add_tensor("blk.0.ffn_down.weight", np.zeros((EMBED, FFN), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


if __name__ == "__main__":
    flags = {"--calls", "--reviewer"}
    args = [a for a in sys.argv[1:] if a not in flags]
    if len(args) != 2:
        sys.exit("usage: python tests/tiny_gguf.py MODEL.gguf TEMPLATE.jinja [--calls | --reviewer]")
    with open(args[1], encoding="utf-8") as file:
        template = file.read()
    if "--reviewer" in sys.argv:
        write_reviewer(args[0], template)
    else:
        write(args[0], template, calls="--calls" in sys.argv)
