#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""docs/cli.md and `strata <command> --help` name the same options.

  cli_doc_test.py --strata build/sw/strata --doc docs/cli.md

For each command with a section `## \\`strata <command> ...\\`` in the page
(the section runs to the next `## ` heading), every option `strata <command>
--help` lists must appear in the section, and every option the section's
heading names must be one `--help` lists. Run by ctest (cli_doc, label unit);
exit status 1 with one line per disagreement.
"""
import argparse
import re
import subprocess
import sys

SECTION = re.compile(r"^## `strata (\w+)([^`\n]*)`\n", re.M)
HELP_OPTION = re.compile(r"^\s+(?:-\w,)?(--[\w-]+)((?:,--[\w-]+)*)", re.M)


def sections(text):
    """command -> (its heading's arguments, the section's text)."""
    out = {}
    for m in SECTION.finditer(text):
        nxt = re.search(r"^## ", text[m.end():], re.M)
        end = m.end() + nxt.start() if nxt else len(text)
        out[m.group(1)] = (m.group(2), text[m.start():end])
    return out


def help_options(strata, command):
    """The long options of `strata command --help`, aliases included."""
    text = subprocess.run([strata, command, "--help"], capture_output=True, text=True,
                          check=True).stdout
    names = set()
    for m in HELP_OPTION.finditer(text):
        names.add(m.group(1))
        names.update(a for a in m.group(2).split(",") if a)
    return names - {"--help"}


def mentioned(option, body):
    return re.search(re.escape(option) + r"(?![\w-])", body) is not None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--strata", required=True, help="the strata command")
    ap.add_argument("--doc", required=True, help="docs/cli.md")
    args = ap.parse_args()
    with open(args.doc, encoding="utf-8") as f:
        secs = sections(f.read())
    problems = []
    if len(secs) < 8:
        problems.append(f"{args.doc}: found {len(secs)} command sections, expected 8 or more")
    for command, (heading, body) in sorted(secs.items()):
        options = help_options(args.strata, command)
        for option in sorted(options):
            if not mentioned(option, body):
                problems.append(f"strata {command}: {option} is in --help, not in {args.doc}")
        for option in sorted(set(re.findall(r"--[\w-]+", heading))):
            if option not in options:
                problems.append(f"strata {command}: {option} is in the heading of its section "
                                f"in {args.doc}, not in --help")
        print(f"strata {command}: {len(options)} options checked")
    for p in problems:
        print("FAIL " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
