#!/usr/bin/python3
"""char2vec_corpus.py — extract running text from ../shared/corpora/text as plain lines.

Usage: char2vec_corpus.py SHARED_TEXT_DIR > corpus.txt

One document per line: fortunes-zh as is; the MSRA news sentences (one character per line in
the source) joined; the review fields of the review CSVs; the Chinese side of Tatoeba; every
string of the `paragraphs` (or `content`/`para`) arrays of the chinese-poetry JSON files, one
poem per line. Nothing is normalized here: gyro char2vec tokens / train does that. Used by the
char2vec benchmarks only; the data stays outside the project.
"""
import csv
import json
import os
import sys


def out(line):
    line = line.replace("\r", " ").replace("\n", " ").strip()
    if line:
        sys.stdout.write(line + "\n")


def poetry_strings(obj, acc):
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in ("paragraphs", "content", "para") and isinstance(v, list):
                acc.append("".join(x for x in v if isinstance(x, str)))
            elif isinstance(v, (dict, list)):
                poetry_strings(v, acc)
    elif isinstance(obj, list):
        for v in obj:
            poetry_strings(v, acc)


def main():
    root = sys.argv[1]
    fz = os.path.join(root, "fortunes-zh")
    for name in sorted(os.listdir(fz)):
        if name == "copyright" or name.endswith(".dat"):
            continue
        with open(os.path.join(fz, name), encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.strip() != "%":
                    out(line)
    with open(os.path.join(root, "news", "dh_msra.txt"), encoding="utf-8", errors="replace") as f:
        sent = []
        for line in f:
            t = line.rstrip("\r\n").split("\t")
            if not t[0]:
                out("".join(sent))
                sent = []
            else:
                sent.append(t[0])
        out("".join(sent))
    for name in ("online_shopping_10_cats.csv", "ChnSentiCorp_htl_all.csv", "waimai_10k.csv"):
        with open(os.path.join(root, "reviews", name), encoding="utf-8", errors="replace", newline="") as f:
            rows = csv.reader(f)
            next(rows, None)
            for row in rows:
                if row:
                    out(row[-1])
    with open(os.path.join(root, "tatoeba", "cmn.txt"), encoding="utf-8", errors="replace") as f:
        for line in f:
            t = line.split("\t")
            if len(t) > 1:
                out(t[1])
    for dirpath, _, files in sorted(os.walk(os.path.join(root, "chinese-poetry"))):
        for name in sorted(files):
            if not name.endswith(".json"):
                continue
            try:
                with open(os.path.join(dirpath, name), encoding="utf-8") as f:
                    data = json.load(f)
            except (ValueError, OSError):
                continue
            acc = []
            poetry_strings(data, acc)
            for s in acc:
                out(s)


if __name__ == "__main__":
    main()
