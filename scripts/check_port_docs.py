#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A block's ports are documented once: in its module, never in docs/rtl-blocks.md.

For each module of rtl/**/*.sv (one module per file):

- Every port of the ANSI port list carries a trailing `//` comment on the line
  that names it (its meaning, and its timing where that is not the stream
  rules').
- The module header (the `//` comment lines above `module`) names ports by
  their names. An identifier written there with a port suffix (`_i`, `_o`,
  `_ni`, `_no`, `_io`), alone or as a glob (`pe_*`, `trace_*_o`; a `*` stands
  for any characters), is a port of this module and must match one. A port of
  another module is written with that module's name, `strata_pe.in_packed_i`
  or `strata_pe.fwd_*`, and must match one of that module's ports. Struct
  fields after a port (`sr_req_i.bank`) are allowed; a name that only reads
  like a port (a signal `x_i` of a generate loop) is not written bare in a
  header.
- docs/rtl-blocks.md holds no port table: no markdown table whose header
  names a port column (`port`, `ports`, `port group`) and no table row whose
  first cell starts with a port-suffixed name. That page is the map (what each
  block is for, how the blocks connect, where to look); the ports are in the
  headers.

  check_port_docs.py [--root DIR]
  check_port_docs.py --self-test

Exit status 0 when clean, 1 with one line per finding (file:line: text).
Run by ctest (port_docs, label lint); --self-test (port_docs_selftest) feeds
the checks small bad examples and fails if one is missed.
"""
import argparse
import fnmatch
import glob
import os
import re
import sys

SUFFIX = r"(?:_i|_o|_ni|_no|_io)"
# A port reference in a header: an optional module prefix, then a name with a
# port suffix, possibly with `*` globs; not part of a longer word or path.
REF = re.compile(r"(?<![\w.*/])(?:(strata_\w+)\.)?([A-Za-z_*][\w*]*" + SUFFIX + r"|[A-Za-z_]\w*_\*)(?![\w*])")
PORT_HEADER_CELL = re.compile(r"^\s*(ports?|port groups?)\s*$", re.IGNORECASE)
PORT_CELL = re.compile(r"^\s*`?[A-Za-z_][\w*]*" + SUFFIX + r"\b")


def blank_comments(text):
    """The text with comments and strings replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (min(j, n - 1) + 1 - i))
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def matching(code, i, open_ch, close_ch):
    """Index of the bracket closing the one at code[i]."""
    depth = 0
    for j in range(i, len(code)):
        if code[j] == open_ch:
            depth += 1
        elif code[j] == close_ch:
            depth -= 1
            if depth == 0:
                return j
    raise ValueError(f"unbalanced {open_ch}{close_ch}")


def split_top(code, start, end):
    """(offset, text) of each comma-separated item of code[start:end] at bracket depth 0."""
    items, depth, begin = [], 0, start
    for j in range(start, end):
        c = code[j]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            items.append((begin, code[begin:j]))
            begin = j + 1
    items.append((begin, code[begin:end]))
    return items


def parse_module(text):
    """(name, header lines [(line, text)], ports [(name, line, has_comment)]) of a module file."""
    code = blank_comments(text)
    m = re.search(r"^\s*module\s+(\w+)", code, re.MULTILINE)
    if not m:
        return None
    name = m.group(1)
    lines = text.splitlines()
    module_line = code.count("\n", 0, m.start(1)) + 1
    header = [(n, line.strip()[2:].strip()) for n, line in enumerate(lines[:module_line - 1], 1)
              if line.strip().startswith("//") and "SPDX-License-Identifier" not in line]
    # After the name: imports (`import a::*;`), an optional parameter list `#( ... )`,
    # then the port list `( ... );`.
    i = m.end(1)
    while True:
        rest = re.compile(r"\s*import\b[^;]*;").match(code, i)
        if not rest:
            break
        i = rest.end()
    hash_at = re.compile(r"\s*#\s*\(").match(code, i)
    if hash_at:
        i = matching(code, hash_at.end() - 1, "(", ")") + 1
    open_at = re.compile(r"\s*\(").match(code, i)
    ports = []
    if open_at:  # a module without ports has `;` here
        lo = open_at.end() - 1
        hi = matching(code, lo, "(", ")")
        for offset, item in split_top(code, lo + 1, hi):
            if not item.strip():
                continue
            decl = re.sub(r"(\s*\[[^\]]*\])*\s*$", "", item)  # unpacked dimensions
            nm = re.search(r"(\w+)\s*$", decl)
            if not nm:
                continue
            pos = offset + nm.start(1)
            line_no = code.count("\n", 0, pos) + 1
            line = lines[line_no - 1]
            col = pos - (code.rfind("\n", 0, pos) + 1)
            ports.append((nm.group(1), line_no, "//" in line[col:]))
    return name, header, ports


def header_refs(header):
    """(line, module or None, pattern) of each port reference in a header."""
    for n, line in header:
        for m in REF.finditer(line.replace("`", " ")):
            yield n, m.group(1), m.group(2)


def matches(pattern, ports):
    return any(fnmatch.fnmatchcase(p, pattern) for p in ports)


def check_modules(modules):
    """modules: {path: text}. Findings for the port comments and header references."""
    parsed = {}
    for path, text in sorted(modules.items()):
        got = parse_module(text)
        if got:
            parsed[path] = got
    ports_of = {name: [p for p, _, _ in ports] for name, _, ports in parsed.values()}
    out = []
    for path, (name, header, ports) in parsed.items():
        base = os.path.splitext(os.path.basename(path))[0]
        if base != name:
            out.append(f"{path}:1: module {name} in a file named after {base}")
        for port, n, commented in ports:
            if not commented:
                out.append(f"{path}:{n}: port {port} has no trailing // comment")
        for n, module, pattern in header_refs(header):
            if module is None:
                if not matches(pattern, ports_of[name]):
                    out.append(f"{path}:{n}: header names {pattern}, not a port of {name} "
                               f"(another module's port is written module.port)")
            elif module not in ports_of:
                out.append(f"{path}:{n}: header names {module}.{pattern}, but {module} "
                           f"is no module of rtl/")
            elif not matches(pattern, ports_of[module]):
                out.append(f"{path}:{n}: header names {module}.{pattern}, not a port of {module}")
    return out


def check_doc(path, text):
    """Findings for port tables in the block map: one per table."""
    out = []
    row = 0  # row of the current table, 0 outside a table
    reported = False
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s.startswith("|"):
            row, reported = 0, False
            continue
        if re.fullmatch(r"[\s:|-]+", s):
            continue  # the separator row
        row += 1
        first = s.strip("|").split("|")[0]
        is_port = PORT_HEADER_CELL.match(first) if row == 1 else PORT_CELL.match(first)
        if is_port and not reported:
            out.append(f"{path}:{n}: a port table (ports live in the module headers): {s[:80]}")
            reported = True
    return out


def scan(root):
    modules = {}
    for path in sorted(glob.glob(os.path.join(root, "rtl", "**", "*.sv"), recursive=True)):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if path.endswith("_pkg.sv"):
            continue  # packages have no ports
        modules[os.path.relpath(path, root)] = text
    doc = os.path.join(root, "docs", "rtl-blocks.md")
    with open(doc, encoding="utf-8") as f:
        doc_text = f.read()
    return check_modules(modules) + check_doc(os.path.relpath(doc, root), doc_text)


GOOD_SV = """// SPDX-License-Identifier: Apache-2.0
// A register slice. out_valid_o rises a cycle after in_valid_i; `out_*` as
// strata_good.in_*; sr_req_i.bank is a field; lane_q is no port.
module strata_good #(
  parameter int unsigned Width = 8  // bits
) (
  input  logic             clk_i,       // clock
  input  logic             rst_ni,      // reset, active low
  input  logic             in_valid_i,  // a word
  input  logic [Width-1:0] in_data_i [2],  // two words
  input  logic             sr_req_i,    // a request
  output logic             out_valid_o  // the word, a cycle later
);
endmodule
"""

BAD_SV = """// SPDX-License-Identifier: Apache-2.0
// Misses: in_ready_o (no such port), strata_good.in_ready_o (not one of
// strata_good's either), strata_none.x_i (no such module), `res_*`.
module strata_bad
  import strata_pkg::*;
#(
  parameter int unsigned Width = 8  // bits
) (
  input  logic clk_i,  // clock
  input  logic in_valid_i,
  output logic [Width-1:0] out_data_o,
  output logic out_valid_o  // valid
);
endmodule
"""

BAD_DOC = """# Blocks

| port | dir | meaning |
|---|---|---|
| `clk_i` | in | clock |

| signal | meaning |
|---|---|
| `in_valid_i` / `in_ready_o` | handshake |
"""

GOOD_DOC = """# Blocks

| code | lane m multiplies |
|---|---|
| `00` SelCur | current[m] |

| layer | cycles |
|---|---|
| 32x32 k3 | 1,042 |
"""


def self_test():
    errors = []
    good = check_modules({"rtl/strata_good.sv": GOOD_SV})
    errors += [f"false alarm: {f}" for f in good]
    bad = check_modules({"rtl/strata_good.sv": GOOD_SV, "rtl/strata_bad.sv": BAD_SV})
    expect = ["port in_valid_i has no trailing", "port out_data_o has no trailing",
              "header names in_ready_o, not a port", "strata_good.in_ready_o, not a port",
              "strata_none.x_i, but strata_none is no module", "header names res_*, not"]
    errors += [f"missed: {e}" for e in expect if not any(e in f for f in bad)]
    if len(bad) != len(expect):
        errors.append(f"expected {len(expect)} findings, got {len(bad)}: {bad}")
    misnamed = check_modules({"rtl/strata_other.sv": GOOD_SV})
    if not any("in a file named after" in f for f in misnamed):
        errors.append("missed: a module in a file of another name")
    doc_bad = check_doc("docs/x.md", BAD_DOC)
    if len(doc_bad) != 2:
        errors.append(f"port tables: expected 2 findings, got {doc_bad}")
    errors += [f"false alarm: {f}" for f in check_doc("docs/x.md", GOOD_DOC)]
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=".", help="repository root (default: .)")
    ap.add_argument("--self-test", action="store_true", help="check the checks themselves")
    args = ap.parse_args()
    problems = self_test() if args.self_test else scan(args.root)
    for p in problems:
        print(p)
    if problems:
        print("self-test failed" if args.self_test else
              f"{len(problems)} finding(s): ports are documented in their module, once")
        return 1
    print("self-test passed" if args.self_test else
          "every port commented, every header port name a port, no port table in the map")
    return 0


if __name__ == "__main__":
    sys.exit(main())
