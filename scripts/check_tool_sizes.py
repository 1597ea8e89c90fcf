#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The command-line tools stay small enough to read (docs/style.md).

Every C++ file under sw/tools/ has at most 400 lines, no function body longer
than 80 lines, and no `STRATA_HAVE_RTL` conditional: the tools call the RTL
backend library, which a build without RTL models replaces by a stub.

A function is a definition that starts at column 0 (the sources follow
.clang-format, which does not indent namespace members) and ends at the
first later line that is a lone `}` at column 0; its body is the lines
between them. Namespaces, classes, structs, enums and unions are not
functions.

    check_tool_sizes.py [--root DIR]     check, exit 1 on a violation
    check_tool_sizes.py --self-test      check the checker on planted faults
"""
import argparse
import pathlib
import re
import sys
import tempfile

MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 80
NOT_FUNCTIONS = re.compile(r"^(namespace|class|struct|enum|union|extern|template\s*<[^>]*>\s*(class|struct))\b")


def function_spans(lines):
    """(name line, body length) of each column-0 definition that opens a block."""
    spans = []
    start = None
    for i, line in enumerate(lines):
        if start is None:
            if line and not line[0].isspace() and line.rstrip().endswith("{") \
                    and not NOT_FUNCTIONS.match(line) and not line.startswith(("//", "#")):
                start = i
        elif line.rstrip() in ("}", "};"):
            spans.append((start + 1, i - start - 1))
            start = None
    return spans


def check_file(path, rel):
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    problems = []
    if len(lines) > MAX_FILE_LINES:
        problems.append(f"{rel}: {len(lines)} lines (at most {MAX_FILE_LINES})")
    if "STRATA_HAVE_RTL" in text:
        problems.append(f"{rel}: uses STRATA_HAVE_RTL (the tools call the RTL backend library)")
    for line_no, body in function_spans(lines):
        if body > MAX_FUNCTION_LINES:
            problems.append(f"{rel}:{line_no}: a function of {body} lines "
                            f"(at most {MAX_FUNCTION_LINES})")
    return problems


def check(root):
    tools = root / "sw" / "tools"
    files = sorted(p for p in tools.rglob("*") if p.suffix in (".cpp", ".hpp", ".h"))
    if not files:
        return [f"{tools}: no C++ files found"], 0
    problems = []
    for f in files:
        problems += check_file(f, f.relative_to(root))
    return problems, len(files)


def self_test():
    with tempfile.TemporaryDirectory() as d:
        root = pathlib.Path(d)
        tools = root / "sw" / "tools" / "strata"
        tools.mkdir(parents=True)
        (tools / "good.cpp").write_text("namespace strata {\nint f() {\n  return 1;\n}\n}\n")
        problems, _ = check(root)
        if problems:
            print("self-test: a clean file was refused:", problems)
            return 1
        long_body = "".join(f"  x += {i};\n" for i in range(MAX_FUNCTION_LINES + 1))
        (tools / "long.cpp").write_text(f"int g() {{\n  int x = 0;\n{long_body}  return x;\n}}\n")
        (tools / "rtl.cpp").write_text("#ifdef STRATA_HAVE_RTL\n#endif\n")
        (tools / "big.cpp").write_text("// line\n" * (MAX_FILE_LINES + 1))
        problems, _ = check(root)
        expected = ["long.cpp:1: a function", "rtl.cpp: uses STRATA_HAVE_RTL", "big.cpp: 401 lines"]
        missing = [e for e in expected if not any(e in p for p in problems)]
        if missing or len(problems) != len(expected):
            print("self-test: expected", expected, "got", problems)
            return 1
    print("self-test passed")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=pathlib.Path,
                    default=pathlib.Path(__file__).resolve().parent.parent)
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    problems, count = check(args.root)
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"tool sizes: {count} files of sw/tools within {MAX_FILE_LINES} lines, "
          f"functions within {MAX_FUNCTION_LINES}, no STRATA_HAVE_RTL")
    return 0


if __name__ == "__main__":
    sys.exit(main())
