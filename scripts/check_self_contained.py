#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The repository stands alone: no file points outside it.

Scans the tracked text files (`git ls-files`, binary files skipped) for
references a user who clones only this repository cannot follow: paths to the
folder beside the repository, the source documents' folder and the planning
document held there, and issue numbers of a tracker the clone does not have.
Design ideas that came from the source documents are cited by their section
of docs/background.md instead. The patterns and the self-test's examples are
spelled so that this file does not match them itself.

  check_self_contained.py [--root DIR]

Exit status 0 when clean, 1 with one line per finding (file:line: text).
Run by ctest (self_contained, label lint); its own patterns are checked by
--self-test.
"""
import argparse
import re
import subprocess
import sys

# One pattern per kind of reference, with what a finding should be replaced by.
PATTERNS = [
    (re.compile(r"\.\./shar[e]d\b"), "a path outside the repository"),
    (re.compile(r"(?<![\w.-])seed[s]/"), "the source documents' folder (cite docs/background.md)"),
    (re.compile(r"\bBRIE[F]\b"), "a planning document outside the repository"),
    (re.compile(r"\b[Ii]ssues?[\s-]*#?\d+\b"), "an issue number (say what the code does instead)"),
]


def findings(path, text):
    for n, line in enumerate(text.splitlines(), 1):
        for pattern, what in PATTERNS:
            if pattern.search(line):
                yield f"{path}:{n}: {what}: {line.strip()[:120]}"


def scan(root):
    files = subprocess.run(["git", "ls-files", "-z"], cwd=root, check=True,
                           capture_output=True).stdout.decode().split("\0")
    out = []
    for path in files:
        if not path:
            continue
        try:
            with open(f"{root}/{path}", "rb") as f:
                data = f.read()
        except (FileNotFoundError, IsADirectoryError):
            continue  # a submodule or a file deleted in the work tree
        if b"\0" in data[:8192]:
            continue  # binary (.npy, .onnx, images)
        out.extend(findings(path, data.decode("utf-8", errors="replace")))
    return out


def self_test():
    outside, docs, plan, issue = "../" + "shared/", "seed" + "s/", "BRI" + "EF", "issue"
    bad = [f"see {outside}{plan}.md", f"from {docs}patent1.txt", f"fixed by {issue} 31",
           f"# {issue.capitalize()} 31: FC layers", f"closes {issue} #7", f"the {issue}-6 target",
           f"the {plan} asks"]
    good = ["the walker issues a column", "issue stage 2, pipeline 6", "issue decision",
            "issues no AW", "docs/background.md item 3", "the product brief's seed value"]
    errors = [f"missed: {t}" for t in bad if not list(findings("x", t))]
    errors += [f"false alarm: {t}" for t in good if list(findings("x", t))]
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=".", help="repository root (default: .)")
    ap.add_argument("--self-test", action="store_true", help="check the patterns themselves")
    args = ap.parse_args()
    problems = self_test() if args.self_test else scan(args.root)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} reference(s) outside the repository" if not args.self_test
              else "self-test failed")
        return 1
    print("self-test passed" if args.self_test else "no reference outside the repository")
    return 0


if __name__ == "__main__":
    sys.exit(main())
