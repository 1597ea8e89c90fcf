#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Generate the views of the Strata CSR map from config/registers.yaml.

One YAML file is the source of the register map; this script writes
  rtl/pkg/strata_csr_pkg.sv       package strata_csr_pkg: byte offsets, field
                                  positions, access masks, reset values, the
                                  performance counter order and the error codes
                                  (enum err_code_e)
  sw/include/strata/csr_map.hpp   the same for C++ (namespace strata::csr), plus
                                  a register table for tests and drivers
  sw/rt/include/strata_regs.h     the same for C (the driver library strata_rt):
                                  offsets, field masks, the counter order, the
                                  error codes with their names and meanings
  docs/registers.md               the register map as tables
With --check it writes nothing and exits 1 when a committed file differs.

YAML rules (checked): offsets are 4-byte aligned and unique (a 64-bit register
takes offset and offset + 4); access is one of ro, rw, w1s, w1c; a field has
either `bit` or `lsb` + `width`, lies inside the register and overlaps no
other field; a field without `access` inherits the register's. Bits outside
the fields of a register that has fields are reserved: they read 0 and ignore
writes.
"""
import argparse
import pathlib
import re
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
ACCESS = ("ro", "rw", "w1s", "w1c")
ACCESS_DOC = {
    "ro": "read only (writes ignored)",
    "rw": "read / write",
    "w1s": "write 1 to set (reads 0)",
    "w1c": "write 1 to clear",
}
NAME_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")


class MapError(Exception):
    pass


def camel(name):
    """ERROR_CODE -> ErrorCode."""
    return "".join(part.capitalize() for part in name.lower().split("_"))


def load(path):
    with open(path) as f:
        doc = yaml.safe_load(f)
    for key in ("data_width", "registers", "error_codes"):
        if key not in doc:
            raise MapError(f"{path}: missing key '{key}'")
    if doc["data_width"] != 32:
        raise MapError(f"{path}: data_width must be 32 (AXI4-Lite), got {doc['data_width']}")
    regs = []
    used_offsets = {}
    for raw in doc["registers"]:
        reg = normalise_register(raw)
        for word in range(reg["width"] // 32):
            off = reg["offset"] + 4 * word
            if off in used_offsets:
                raise MapError(f"register {reg['name']}: offset 0x{off:03X} already used by "
                               f"{used_offsets[off]}")
            used_offsets[off] = reg["name"]
        regs.append(reg)
    ctrs = counters(regs)
    if not ctrs or any(c["offset"] != ctrs[0]["offset"] + 8 * i for i, c in enumerate(ctrs)):
        raise MapError("64-bit counters must be contiguous, 8 bytes apart (one decoder)")
    names = [r["name"] for r in regs]
    if len(set(names)) != len(names):
        raise MapError("register names must be unique")
    codes = doc["error_codes"]
    if not isinstance(codes, dict) or codes.get("NONE") != 0:
        raise MapError("error_codes must be a mapping with NONE: 0")
    code_field = next((f for r in regs if r["name"] == "ERROR_CODE" for f in r["fields"]
                       if f["name"] == "CODE"), None)
    if code_field is None:
        raise MapError("register ERROR_CODE must have a field CODE (the error codes' width)")
    top = (1 << code_field["width"]) - 1
    values = list(codes.values())
    if len(set(values)) != len(values) or any(not (0 <= v <= top) for v in values):
        raise MapError(f"error codes must be unique values in 0..{top} (ERROR_CODE.CODE is "
                       f"{code_field['width']} bits)")
    for name in codes:
        if not NAME_RE.match(name):
            raise MapError(f"error code name '{name}' must be UPPER_SNAKE_CASE")
    return regs, codes


def normalise_register(raw):
    name = raw.get("name")
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise MapError(f"register name {name!r} must be UPPER_SNAKE_CASE")
    offset = raw.get("offset")
    if not isinstance(offset, int) or offset % 4 != 0 or offset < 0:
        raise MapError(f"register {name}: offset must be a non-negative multiple of 4")
    access = raw.get("access")
    if access not in ACCESS:
        raise MapError(f"register {name}: access must be one of {', '.join(ACCESS)}")
    width = raw.get("width", 32)
    if width not in (32, 64):
        raise MapError(f"register {name}: width must be 32 or 64")
    if width == 64 and (access != "ro" or "fields" in raw):
        raise MapError(f"register {name}: 64-bit registers are read-only counters without fields")
    reset = raw.get("reset")
    if reset is not None and not (isinstance(reset, int) and 0 <= reset < (1 << width)):
        raise MapError(f"register {name}: reset must fit in {width} bits")
    fields = []
    occupied = 0
    for f in raw.get("fields", []):
        fname = f.get("name")
        if not isinstance(fname, str) or not NAME_RE.match(fname):
            raise MapError(f"register {name}: field name {fname!r} must be UPPER_SNAKE_CASE")
        if "bit" in f:
            lsb, fwidth = f["bit"], 1
        elif "lsb" in f and "width" in f:
            lsb, fwidth = f["lsb"], f["width"]
        else:
            raise MapError(f"register {name}.{fname}: give `bit` or `lsb` and `width`")
        if not (isinstance(lsb, int) and isinstance(fwidth, int) and fwidth >= 1
                and 0 <= lsb and lsb + fwidth <= 32):
            raise MapError(f"register {name}.{fname}: bits out of range")
        mask = ((1 << fwidth) - 1) << lsb
        if occupied & mask:
            raise MapError(f"register {name}.{fname}: overlaps another field")
        occupied |= mask
        faccess = f.get("access", access)
        if faccess not in ACCESS:
            raise MapError(f"register {name}.{fname}: access must be one of {', '.join(ACCESS)}")
        fields.append({"name": fname, "lsb": lsb, "width": fwidth, "mask": mask,
                       "access": faccess, "doc": f.get("doc", "")})
    if reset is not None and fields and reset & ~occupied:
        raise MapError(f"register {name}: reset sets reserved bits")
    full = (1 << width) - 1 if width == 32 else 0xFFFFFFFF
    masks = {a: 0 for a in ACCESS}
    if fields:
        for f in fields:
            masks[f["access"]] |= f["mask"]
    else:
        masks[access] = full
    return {"name": name, "offset": offset, "access": access, "width": width,
            "reset": reset if reset is not None else 0, "has_reset": reset is not None,
            "doc": raw.get("doc", ""), "fields": fields, "masks": masks}


def addr_width(regs):
    top = max(r["offset"] + r["width"] // 8 for r in regs)
    return max(12, (top - 1).bit_length())


def counters(regs):
    return [r for r in regs if r["width"] == 64]


def cpp_uint(bits):
    """The smallest C++ unsigned integer type of at least `bits` bits."""
    return next(f"uint{n}_t" for n in (8, 16, 32, 64) if bits <= n)


def code_width(regs):
    """Bits of an error code: the width of ERROR_CODE.CODE (load checks that it exists)."""
    return next(f["width"] for r in regs if r["name"] == "ERROR_CODE" for f in r["fields"]
                if f["name"] == "CODE")


# --------------------------------------------------------------------------- SystemVerilog

def render_sv(regs, codes, src):
    aw = addr_width(regs)
    out = [
        "// SPDX-License-Identifier: Apache-2.0",
        f"// GENERATED by scripts/gen_registers.py from {src}: do not edit.",
        "// Strata CSR map: byte offsets, field positions (and a type per multi-bit field,",
        "// csr_<register>_<field>_t), access masks, reset values, performance counter",
        "// order and error codes (docs/registers.md).",
        "// Every register's constants are emitted and each block uses the ones it",
        "// decodes, so an unused one says nothing: the waiver is here, not in a",
        "// tool's configuration file, so that any lint of rtl/ reads it.",
        "/* verilator lint_off UNUSEDPARAM */",
        "package strata_csr_pkg;",
        "",
        "  localparam int unsigned CsrDataWidth = 32;  // AXI4-Lite data bits",
        f"  localparam int unsigned CsrAddrWidth = {aw};  // byte address bits decoded",
        "",
        "  // Register byte offsets (64-bit counters: _LO at the offset, _HI at + 4).",
    ]
    for r in regs:
        if r["width"] == 64:
            out.append(f"  localparam logic [CsrAddrWidth-1:0] CSR_{r['name']}_LO_OFFSET = "
                       f"{aw}'h{r['offset']:03X};")
            out.append(f"  localparam logic [CsrAddrWidth-1:0] CSR_{r['name']}_HI_OFFSET = "
                       f"{aw}'h{r['offset'] + 4:03X};")
        else:
            out.append(f"  localparam logic [CsrAddrWidth-1:0] CSR_{r['name']}_OFFSET = "
                       f"{aw}'h{r['offset']:03X};")
    out += ["", "  // Reset values and access masks of the 32-bit registers (a bit is in"
            " at most one", "  // mask; bits in none are reserved and read 0)."]
    for r in regs:
        if r["width"] == 64:
            continue
        out.append(f"  localparam logic [31:0] CSR_{r['name']}_RESET = 32'h{r['reset']:08X};")
        for a in ACCESS:
            if r["masks"][a]:
                out.append(f"  localparam logic [31:0] CSR_{r['name']}_{a.upper()}_MASK = "
                           f"32'h{r['masks'][a]:08X};")
    out += ["", "  // Field positions."]
    for r in regs:
        for f in r["fields"]:
            base = f"CSR_{r['name']}_{f['name']}"
            if f["width"] == 1:
                out.append(f"  localparam int unsigned {base}_BIT = {f['lsb']};")
            else:
                out.append(f"  localparam int unsigned {base}_LSB = {f['lsb']};")
                out.append(f"  localparam int unsigned {base}_WIDTH = {f['width']};")
                out.append(f"  typedef logic [{base}_WIDTH-1:0] {base.lower()}_t;")
    ctrs = counters(regs)
    out += ["", "  // Performance counters: contiguous LO/HI pairs from CSR_PERF_BASE_OFFSET;",
            "  // *_IDX is the counter's index in the counter vector (offset order).",
            f"  localparam int unsigned NumPerfCounters = {len(ctrs)};",
            f"  localparam logic [CsrAddrWidth-1:0] CSR_PERF_BASE_OFFSET = "
            f"{aw}'h{ctrs[0]['offset']:03X};"]
    for i, r in enumerate(ctrs):
        out.append(f"  localparam int unsigned {r['name']}_IDX = {i};")
    cw = code_width(regs)
    out += ["", "  // Error codes (ERROR_CODE.CODE).",
            "  typedef enum logic [CSR_ERROR_CODE_CODE_WIDTH-1:0] {"]
    items = list(codes.items())
    for i, (name, value) in enumerate(items):
        sep = "," if i + 1 < len(items) else ""
        out.append(f"    Err{camel(name)} = {cw}'d{value}{sep}")
    out += ["  } err_code_e;", "", "endpackage : strata_csr_pkg",
            "/* verilator lint_on UNUSEDPARAM */"]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- C++

def render_hpp(regs, codes, src):
    out = [
        "// SPDX-License-Identifier: Apache-2.0",
        f"// GENERATED by scripts/gen_registers.py from {src}: do not edit.",
        "// Strata CSR map for the driver and the testbenches (docs/registers.md).",
        "#pragma once",
        "",
        "#include <array>",
        "#include <cstdint>",
        "#include <string_view>",
        "",
        "namespace strata::csr {",
        "",
        "enum class Access : uint8_t { kRo, kRw, kW1s, kW1c };",
        "",
        "// Register byte offsets (64-bit counters: the LO word; HI is at + 4).",
    ]
    for r in regs:
        out.append(f"inline constexpr uint32_t k{camel(r['name'])} = 0x{r['offset']:03X};")
    out += ["", "// Fields: k<Register><Field> is the mask; ...Lsb / ...Width for wide fields."]
    for r in regs:
        for f in r["fields"]:
            base = f"k{camel(r['name'])}{camel(f['name'])}"
            out.append(f"inline constexpr uint32_t {base} = 0x{f['mask']:08X};")
            if f["width"] > 1:
                out.append(f"inline constexpr unsigned {base}Lsb = {f['lsb']};")
                out.append(f"inline constexpr unsigned {base}Width = {f['width']};")
    out += [
        "",
        "// One 32-bit register (a 64-bit counter is one entry with wide = true).",
        "struct Register {",
        "  std::string_view name;",
        "  uint32_t offset;",
        "  Access access;",
        "  bool wide;        // 64-bit LO/HI counter",
        "  bool has_reset;   // reset value given by the map (else: hardware value)",
        "  uint32_t reset;",
        "  uint32_t ro_mask, rw_mask, w1s_mask, w1c_mask;  // bits in none: reserved",
        "};",
        "",
        f"inline constexpr std::array<Register, {len(regs)}> kRegisters{{{{",
    ]
    amap = {"ro": "kRo", "rw": "kRw", "w1s": "kW1s", "w1c": "kW1c"}
    for r in regs:
        m = r["masks"]
        out.append(
            f"    {{\"{r['name']}\", 0x{r['offset']:03X}, Access::{amap[r['access']]}, "
            f"{'true' if r['width'] == 64 else 'false'}, "
            f"{'true' if r['has_reset'] else 'false'}, 0x{r['reset'] & 0xFFFFFFFF:08X}, "
            f"0x{m['ro']:08X}, 0x{m['rw']:08X}, 0x{m['w1s']:08X}, 0x{m['w1c']:08X}}},")
    out.append("}};")
    ctrs = counters(regs)
    out += ["", "// Performance counters in offset order (the RTL's counter vector order).",
            f"inline constexpr std::array<uint32_t, {len(ctrs)}> kPerfCounters{{{{"]
    out += [f"    k{camel(r['name'])}," for r in ctrs]
    out += ["}};", "", f"enum class ErrorCode : {cpp_uint(code_width(regs))} {{"]
    for name, value in codes.items():
        out.append(f"  k{camel(name)} = {value},")
    out += ["};", "", "inline constexpr std::string_view to_string(ErrorCode code) {",
            "  switch (code) {"]
    for name in codes:
        out.append(f"    case ErrorCode::k{camel(name)}: return \"{name}\";")
    out += ["  }", "  return \"(unknown error code)\";", "}", "",
            "}  // namespace strata::csr"]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- C (strata_rt)

def c_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_c(regs, codes, src, code_docs):
    out = [
        "/* SPDX-License-Identifier: Apache-2.0 */",
        f"/* GENERATED by scripts/gen_registers.py from {src}: do not edit. */",
        "/* Strata CSR map for C: the driver library strata_rt (docs/registers.md). */",
        "#ifndef STRATA_REGS_H",
        "#define STRATA_REGS_H",
        "",
        "#include <stdint.h>",
        "",
        "/* Register byte offsets (64-bit counters: the LO word; HI is at + 4). */",
    ]
    for r in regs:
        out.append(f"#define STRATA_REG_{r['name']} 0x{r['offset']:03X}u")
    for r in regs:
        if r["has_reset"]:
            out.append(f"#define STRATA_{r['name']}_RESET 0x{r['reset']:08X}u")
    out += ["", "/* Fields: STRATA_<REGISTER>_<FIELD> is the mask; _LSB / _WIDTH for wide fields. */"]
    for r in regs:
        for f in r["fields"]:
            base = f"STRATA_{r['name']}_{f['name']}"
            out.append(f"#define {base} 0x{f['mask']:08X}u")
            if f["width"] > 1:
                out.append(f"#define {base}_LSB {f['lsb']}u")
                out.append(f"#define {base}_WIDTH {f['width']}u")
    ctrs = counters(regs)
    out += ["", "/* Performance counters in offset order (strata_rt_counters order). */",
            f"#define STRATA_PERF_COUNTERS {len(ctrs)}u"]
    for i, r in enumerate(ctrs):
        out.append(f"#define STRATA_{r['name']}_INDEX {i}u")
    out += ["", "/* Error codes (ERROR_CODE.CODE). */", "enum strata_hw_error {"]
    for name, value in codes.items():
        out.append(f"  STRATA_HW_ERR_{name} = {value},")
    out += ["};", "",
            "/* The code's name (\"AXI_READ\"), or NULL for a value that is not a code. */",
            "static inline const char *strata_hw_error_name(uint32_t code) {",
            "  switch (code) {"]
    for name, value in codes.items():
        out.append(f"    case {value}u: return {c_string(name)};")
    out += ["    default: return 0;", "  }", "}", "",
            "/* What the code means (docs/registers.md), or NULL for a value that is not a code. */",
            "static inline const char *strata_hw_error_text(uint32_t code) {",
            "  switch (code) {"]
    for name, value in codes.items():
        text = code_docs.get(name) or ("no error" if value == 0 else name)
        out.append(f"    case {value}u: return {c_string(text)};")
    out += ["    default: return 0;", "  }", "}", "", "#endif /* STRATA_REGS_H */"]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- Markdown

def md(text):
    """Table-cell text: a literal | would end the cell."""
    return text.replace("|", "\\|")


def render_md(regs, codes, src, code_docs):
    out = [
        "<!-- GENERATED by scripts/gen_registers.py from "
        f"{src}: do not edit; run the script. -->",
        "# Strata register map",
        "",
        "AXI4-Lite slave, 32-bit registers at byte offsets. Every access gets `OKAY`,",
        "except an address that names no register, which gets `SLVERR` (a write to it",
        "changes nothing, a read returns 0). Writes with `WSTRB` other than all ones",
        "are applied to the selected bytes only. Bits that belong to no field read 0",
        "and ignore writes.",
        "",
        "Access: " + "; ".join(f"`{a}` {d}" for a, d in ACCESS_DOC.items()) + ".",
        "",
        "64-bit counters are LO/HI pairs: reading LO returns the low half and",
        "captures the high half of the same counter in a snapshot register; reading",
        "HI returns that snapshot (so read LO first, then HI). There is one snapshot",
        "register for all counters: a LO read of another counter in between replaces",
        "it.",
        "",
        "| offset | name | access | reset | description |",
        "|---|---|---|---|---|",
    ]
    for r in regs:
        reset = f"0x{r['reset']:08X}" if r["has_reset"] else ("0" if r["access"] in ("rw", "w1c")
                                                             else "hw")
        if r["width"] == 64:
            out.append(f"| 0x{r['offset']:03X} | {r['name']}_LO | ro | 0 | {md(r['doc'])} "
                       "(bits 31:0) |")
            out.append(f"| 0x{r['offset'] + 4:03X} | {r['name']}_HI | ro | 0 | "
                       "bits 63:32, captured by the LO read |")
        else:
            out.append(f"| 0x{r['offset']:03X} | {r['name']} | {r['access']} | {reset} | "
                       f"{md(r['doc'])} |")
    out += ["", "`hw`: set by the hardware: the run state after reset (idle, no error) or the"
            " configuration", "the core was built with (config/default.yaml).", "", "## Fields",
            ""]
    for r in regs:
        if not r["fields"]:
            continue
        out += [f"### {r['name']} (0x{r['offset']:03X})", "", "| bits | field | access | "
                "description |", "|---|---|---|---|"]
        for f in r["fields"]:
            hi = f["lsb"] + f["width"] - 1
            bits = f"{f['lsb']}" if f["width"] == 1 else f"{hi}:{f['lsb']}"
            out.append(f"| {bits} | {f['name']} | {f['access']} | {md(f['doc'])} |")
        out.append("")
    out += ["## Error codes (ERROR_CODE.CODE)", "", "| code | name | meaning |", "|---|---|---|"]
    for name, value in codes.items():
        out.append(f"| {value} | {name} | {md(code_docs.get(name, ''))} |")
    return "\n".join(out) + "\n"


def error_code_docs(path):
    """The trailing comments of the error_codes block (YAML drops them)."""
    docs = {}
    in_codes = False
    for line in pathlib.Path(path).read_text().splitlines():
        if line.startswith("error_codes:"):
            in_codes = True
            continue
        if in_codes:
            if line and not line.startswith(" "):
                break
            m = re.match(r"\s+([A-Z_0-9]+):\s*\d+\s*(?:#\s*(.*))?$", line)
            if m:
                docs[m.group(1)] = (m.group(2) or "").strip()
    return docs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("registers", nargs="?", default="config/registers.yaml")
    ap.add_argument("--check", action="store_true", help="compare, do not write")
    args = ap.parse_args()
    src = pathlib.Path(args.registers)
    try:
        regs, codes = load(ROOT / src)
    except (MapError, OSError, yaml.YAMLError) as e:
        print(f"gen_registers: {e}", file=sys.stderr)
        return 2
    outputs = {
        ROOT / "rtl/pkg/strata_csr_pkg.sv": render_sv(regs, codes, src),
        ROOT / "sw/include/strata/csr_map.hpp": render_hpp(regs, codes, src),
        ROOT / "docs/registers.md": render_md(regs, codes, src, error_code_docs(ROOT / src)),
        ROOT / "sw/rt/include/strata_regs.h": render_c(regs, codes, src,
                                                       error_code_docs(ROOT / src)),
    }
    stale = []
    for path, text in outputs.items():
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(str(path.relative_to(ROOT)))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    if stale:
        print("out of date (run scripts/gen_registers.py):", ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
