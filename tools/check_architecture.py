#!/usr/bin/env python3
"""Checks ARCHITECTURE.md's repository map against the tree: every file or folder the map
names under a top-level entry exists there (or from the top), and every module at the top of a crate's src/
is named in its entry. Run by scripts/test.sh; exits 1 listing what drifted."""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Files every crate has, which the map does not list.
ALWAYS = {"lib.rs", "main.rs", "error.rs", "build.rs", "tests.rs"}
NAME = re.compile(r"(?<![\w./-])((?:[\w-]+/)*[\w-]+(?:\.(?:rs|py|java|c|h|sh|toml|md|pyi))|(?:[\w-]+/)+)(?![\w])")


def blocks(text):
    """The map's entries: (path at the left margin, the entry's text)."""
    tree = text.split("## The repository", 1)[1].split("```", 2)[1]
    entry, lines = None, []
    for line in tree.splitlines():
        head = re.match(r"^(\S+/)\s", line)
        if head:
            if entry:
                yield entry, "\n".join(lines)
            entry, lines = head.group(1), [line[len(head.group(1)):]]
        elif entry:
            lines.append(line)
    if entry:
        yield entry, "\n".join(lines)


def files_under(top):
    out = set()
    for d, subdirs, files in os.walk(os.path.join(ROOT, top)):
        subdirs[:] = [s for s in subdirs if s not in ("target", "node_modules", ".git")]
        rel = os.path.relpath(d, os.path.join(ROOT, top))
        rel = "" if rel == "." else rel + "/"
        out.add(rel)
        out.update(rel + f for f in files)
    return out


def main():
    text = open(os.path.join(ROOT, "ARCHITECTURE.md"), encoding="utf-8").read()
    problems = []
    for entry, body in blocks(text):
        if not os.path.isdir(os.path.join(ROOT, entry)):
            problems.append(f"{entry}: no such folder")
            continue
        have = files_under(entry)
        named = set(NAME.findall(body))
        for n in sorted(named):
            if n.startswith(("http", "../")) or "://" in n:
                continue
            # A path from the top (docs/FORMAT.md) may be named too.
            if os.path.exists(os.path.join(ROOT, n)):
                continue
            if not any(h == n or h.endswith("/" + n) for h in have):
                problems.append(f"{entry}: names {n}, which is not under it")
        src = os.path.join(ROOT, entry, "src")
        if entry.startswith("crates/") and os.path.isdir(src):
            for f in sorted(os.listdir(src)):
                module = f if f.endswith(".rs") else f + "/" if os.path.isdir(os.path.join(src, f)) else None
                if not module or module in ALWAYS:
                    continue
                stem = module[:-3] if module.endswith(".rs") else module[:-1]
                if not re.search(rf"(?<![\w]){re.escape(stem)}(\.rs|/|\b)", body):
                    problems.append(f"{entry}: src/{module} is not in the map")
    for p in problems:
        print(f"ARCHITECTURE.md: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
