#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Generate the RTL, C++ and documentation views of the Strata instruction encoding.

One YAML file (config/isa.yaml) is the source; this script writes
  rtl/pkg/strata_isa_pkg.sv            package strata_isa_pkg: InstrBits, opcode_e and
                                       the other enums, <Op><Field>Lsb/Width, the field
                                       types <op>_<field>_t, field extractors and the
                                       used-bit masks per opcode
  sw/include/strata/isa_fields.hpp     namespace strata::isa: the same as constexpr
                                       field descriptors {lsb, width, is_signed} + enums
  sw/include/strata/isa_codec.hpp      one struct per opcode (a member per field: the
                                       enum's type, bool for a 1-bit flag, else int64_t)
                                       with its encode (struct to bits, range-checked)
                                       and decode (bits to struct); the tail of
                                       strata/isa.hpp
  sw/rt/include/strata_isa.h           the opcodes, enum values and field positions as C
                                       macros, for the driver library (strata_rt) that
                                       checks a bundle's external accesses
  docs/isa.md                          the field tables between the markers
                                       <!-- BEGIN GENERATED FIELDS --> / <!-- END ... -->
It first checks the encoding: no two fields of one opcode overlap (header included),
every field lies inside the instruction, header fields lie below the payload and
payload fields above it, enum values, opcodes and defaults fit their fields, names are
unique and usable as C++ members.
With --check it writes nothing and exits 1 when a committed file differs; with
--source and --out-dir it writes the views of another encoding elsewhere (the
widening test, scripts/tests/test_field_widths.py, lints the RTL against them).
"""
import argparse
import pathlib
import re
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
SRC = "config/isa.yaml"
SV_OUT = "rtl/pkg/strata_isa_pkg.sv"
HPP_OUT = "sw/include/strata/isa_fields.hpp"
CODEC_OUT = "sw/include/strata/isa_codec.hpp"
C_OUT = "sw/rt/include/strata_isa.h"
DOC_OUT = "docs/isa.md"
BEGIN = "<!-- BEGIN GENERATED FIELDS -->"
END = "<!-- END GENERATED FIELDS -->"
NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
# Field names become C++ struct members (isa_codec.hpp): none may be a keyword.
CPP_KEYWORDS = frozenset("""
    alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t
    char16_t char32_t class compl concept const consteval constexpr constinit const_cast
    continue co_await co_return co_yield decltype default delete do double dynamic_cast else
    enum explicit export extern false float for friend goto if inline int long mutable
    namespace new noexcept not not_eq nullptr operator or or_eq private protected public
    register reinterpret_cast requires return short signed sizeof static static_assert
    static_cast struct switch template this thread_local throw true try typedef typeid
    typename union unsigned using virtual void volatile wchar_t while xor xor_eq""".split())
WORD_BITS = 64


class IsaError(Exception):
    pass


def camel(name):
    """snake_case -> UpperCamelCase (ext_addr -> ExtAddr, pe_cache -> PeCache)."""
    return "".join(part.capitalize() for part in name.lower().split("_"))


class Field:
    def __init__(self, section, raw, enums):
        where = f"{section} field {raw.get('name', '?')!r}"
        unknown = set(raw) - {"name", "lsb", "width", "signed", "enum", "default", "doc"}
        if unknown:
            raise IsaError(f"{where}: unknown keys {sorted(unknown)}")
        for key in ("name", "lsb", "width", "doc"):
            if key not in raw:
                raise IsaError(f"{where}: missing '{key}'")
        self.name = raw["name"]
        if not isinstance(self.name, str) or not NAME_RE.match(self.name):
            raise IsaError(f"{where}: name must be lower_snake_case")
        if self.name in CPP_KEYWORDS:
            raise IsaError(f"{where}: name is a C++ keyword")
        self.lsb = raw["lsb"]
        self.width = raw["width"]
        if not isinstance(self.lsb, int) or self.lsb < 0:
            raise IsaError(f"{where}: lsb must be a non-negative integer")
        if not isinstance(self.width, int) or not 1 <= self.width <= WORD_BITS:
            raise IsaError(f"{where}: width must be 1..{WORD_BITS}")
        self.signed = bool(raw.get("signed", False))
        self.enum = raw.get("enum")
        self.doc = str(raw["doc"])
        if self.enum is not None:
            if self.enum not in enums:
                raise IsaError(f"{where}: unknown enum '{self.enum}'")
            if self.signed:
                raise IsaError(f"{where}: an enum field cannot be signed")
            for value_name, value in enums[self.enum].items():
                if value >= 1 << self.width:
                    raise IsaError(f"{where}: enum value {value_name}={value} does not fit "
                                   f"{self.width} bits")
        self.default = raw.get("default", 0)
        if not isinstance(self.default, int) or isinstance(self.default, bool):
            raise IsaError(f"{where}: default must be an integer")
        lo, hi = self.value_range()
        if not lo <= self.default <= hi:
            raise IsaError(f"{where}: default {self.default} does not fit {self.width} "
                           f"{'signed' if self.signed else 'unsigned'} bits")
        if self.enum is not None and self.default not in enums[self.enum].values():
            raise IsaError(f"{where}: default {self.default} is no value of enum '{self.enum}'")

    def value_range(self):
        if self.signed:
            return -(1 << (self.width - 1)), (1 << (self.width - 1)) - 1
        return 0, min((1 << self.width) - 1, (1 << 63) - 1)  # C++ holds values as int64_t

    @property
    def msb(self):
        return self.lsb + self.width - 1


class Isa:
    def __init__(self, cfg):
        known = {"instruction_bits", "opcodes", "enums", "header", "sv_types", "dep_fields"}
        self.bits = cfg.get("instruction_bits")
        if self.bits != 512:
            raise IsaError(f"instruction_bits must be 512, got {self.bits!r}")
        self.header_bits = 128
        self.opcodes = cfg.get("opcodes") or {}
        if not isinstance(self.opcodes, dict) or not self.opcodes:
            raise IsaError("'opcodes' must be a non-empty mapping")
        self.enums = cfg.get("enums") or {}
        for enum_name, values in self.enums.items():
            if not NAME_RE.match(enum_name) or not isinstance(values, dict) or not values:
                raise IsaError(f"enum '{enum_name}': must be a lower_snake_case name with values")
            seen = {}
            for value_name, value in values.items():
                if not isinstance(value, int) or value < 0:
                    raise IsaError(f"enum '{enum_name}': {value_name} must be a non-negative int")
                if value in seen:
                    raise IsaError(f"enum '{enum_name}': {value_name} and {seen[value]} are both "
                                   f"{value}")
                seen[value] = value_name
        self.sv_types = cfg.get("sv_types") or {}
        for enum_name, sv_type in self.sv_types.items():
            if enum_name not in self.enums:
                raise IsaError(f"sv_types: '{enum_name}' is not an enum")
            check_sv_type(enum_name, self.enums[enum_name], sv_type)
        self.header = [Field("header", f, self.enums) for f in cfg.get("header") or []]
        if not self.header or self.header[0].name != "opcode":
            raise IsaError("the header must start with the 'opcode' field")
        self.opcode_field = self.header[0]
        by_name = {f.name: f for f in self.header}
        dep_names = cfg.get("dep_fields") or []
        if not isinstance(dep_names, list) or not dep_names:
            raise IsaError("'dep_fields' must be a non-empty list of header field names")
        for name in dep_names:
            if name not in by_name:
                raise IsaError(f"dep_fields: '{name}' is not a header field")
        if len(set(dep_names)) != len(dep_names):
            raise IsaError("dep_fields: a field is named twice")
        self.dep_fields = [by_name[name] for name in dep_names]
        if len({f.width for f in self.dep_fields}) != 1:
            raise IsaError("dep_fields: the dependency counts must all have one width")
        if self.opcode_field.lsb != 0:
            raise IsaError("the opcode field must start at bit 0")
        seen = {}
        for op, value in self.opcodes.items():
            if not re.match(r"^[A-Z][A-Z0-9_]*$", op):
                raise IsaError(f"opcode '{op}': must be UPPER_CASE")
            if not isinstance(value, int) or not 0 <= value < 1 << self.opcode_field.width:
                raise IsaError(f"opcode {op}={value!r} does not fit the "
                               f"{self.opcode_field.width}-bit opcode field")
            if value in seen:
                raise IsaError(f"opcodes {op} and {seen[value]} are both {value}")
            seen[value] = op
        if self.opcodes.get("ILLEGAL") != 0:
            raise IsaError("opcode ILLEGAL must be 0 (all-zero memory is never an instruction)")
        self.payloads = {}
        for op in self.opcodes:
            if op == "ILLEGAL":
                continue
            key = op.lower()
            if key not in cfg:
                raise IsaError(f"opcode {op}: no '{key}:' payload section (use [] for none)")
            self.payloads[op] = [Field(key, f, self.enums) for f in cfg[key] or []]
            known.add(key)
        unknown = set(cfg) - known
        if unknown:
            raise IsaError(f"unknown top-level keys {sorted(unknown)}")
        self.check()

    def check(self):
        for f in self.header:
            if f.msb >= self.header_bits:
                raise IsaError(f"header field '{f.name}' (bits {f.msb}:{f.lsb}) reaches into the "
                               f"payload (header is bits {self.header_bits - 1}:0)")
        self.check_overlaps("header", self.header)
        header_names = {f.name for f in self.header}
        for op, fields in self.payloads.items():
            for f in fields:
                if f.lsb < self.header_bits:
                    raise IsaError(f"{op} field '{f.name}' (bits {f.msb}:{f.lsb}) overlaps the "
                                   f"header (bits {self.header_bits - 1}:0)")
                if f.msb >= self.bits:
                    raise IsaError(f"{op} field '{f.name}' (bits {f.msb}:{f.lsb}) is outside the "
                                   f"{self.bits}-bit instruction")
                if f.name in header_names:
                    raise IsaError(f"{op} field '{f.name}' has the name of a header field")
                if f.name == "hdr":
                    raise IsaError(f"{op} field 'hdr': the C++ structs' header member has "
                                   f"that name")
            self.check_overlaps(op, fields)
        for enum_name in self.enums:
            widths = {f.width for fs in [self.header, *self.payloads.values()] for f in fs
                      if f.enum == enum_name}
            if len(widths) > 1:
                raise IsaError(f"enum '{enum_name}' is used by fields of different widths")

    @staticmethod
    def check_overlaps(section, fields):
        names = set()
        for i, a in enumerate(fields):
            if a.name in names:
                raise IsaError(f"{section}: field '{a.name}' defined twice")
            names.add(a.name)
            for b in fields[i + 1:]:
                if a.lsb <= b.msb and b.lsb <= a.msb:
                    raise IsaError(f"{section}: fields '{a.name}' (bits {a.msb}:{a.lsb}) and "
                                   f"'{b.name}' (bits {b.msb}:{b.lsb}) overlap")

    def enum_width(self, enum_name):
        for fs in [self.header, *self.payloads.values()]:
            for f in fs:
                if f.enum == enum_name:
                    return f.width
        return max(1, max(self.enums[enum_name].values()).bit_length())

    def used_words(self, op):
        """Bits used by `op` (header + payload) as 64-bit words, word 0 first."""
        words = [0] * (self.bits // WORD_BITS)
        for f in self.header + self.payloads[op]:
            for b in range(f.lsb, f.msb + 1):
                words[b // WORD_BITS] |= 1 << (b % WORD_BITS)
        return words


def check_sv_type(enum_name, values, sv_type):
    """The existing SystemVerilog enum `pkg::type_e` must have a member <Anything><Value>
    with the same number for every value of the YAML enum, and no other members."""
    m = re.match(r"^(strata_[a-z0-9_]*pkg)::([a-z0-9_]+_e)$", sv_type)
    if not m:
        raise IsaError(f"sv_types: '{sv_type}' must be <strata_*pkg>::<type>_e")
    path = ROOT / "rtl" / "pkg" / f"{m.group(1)}.sv"
    if not path.exists():
        raise IsaError(f"sv_types: {path.relative_to(ROOT)} does not exist")
    body = re.search(r"typedef\s+enum[^{]*\{([^}]*)\}\s*" + m.group(2) + r"\s*;",
                     path.read_text())
    if not body:
        raise IsaError(f"sv_types: no enum {m.group(2)} in {path.relative_to(ROOT)}")
    members = {}
    for name, base, digits in re.findall(r"(\w+)\s*=\s*\d*'([bdh])([0-9a-fA-F_]+)",
                                         body.group(1)):
        members[name] = int(digits.replace("_", ""), {"b": 2, "d": 10, "h": 16}[base])
    if len(members) != len(values):
        raise IsaError(f"sv_types: {sv_type} has {len(members)} members, enum '{enum_name}' "
                       f"has {len(values)}")
    for value_name, value in values.items():
        hits = [n for n in members if n.endswith(camel(value_name))]
        if len(hits) != 1 or members[hits[0]] != value:
            raise IsaError(f"sv_types: {sv_type} has no member *{camel(value_name)} = {value} "
                           f"(enum '{enum_name}')")


# ---- SystemVerilog -------------------------------------------------------------------------

def sv_prefix(op):
    return "Hdr" if op is None else camel(op)


def sv_func_prefix(op):
    return "hdr" if op is None else op.lower()


def sv_type(op, f):
    """The field's own type, a vector of its width: <op>_<field>_t (hdr_ for the header)."""
    return f"{sv_func_prefix(op)}_{f.name}_t"


def render_sv(isa):
    out = [
        "// SPDX-License-Identifier: Apache-2.0",
        f"// GENERATED by scripts/gen_isa.py from {SRC}: do not edit.",
        "// Strata instruction encoding (docs/isa.md): the instruction width, opcodes and",
        "// enumerations, the position of every field (<Op><Field>Lsb / <Op><Field>Width),",
        "// a type per field (<op>_<field>_t, a vector of its width: the registers, ports",
        "// and struct members that hold the field), one extractor function per field",
        "// (<op>_<field>(instr); enum fields return the enum) and, per opcode, the mask",
        "// of the bits it uses: every other bit is reserved and must be 0 (ILLEGAL_INSTR).",
        "// Bit b of an instruction is bit b % 64 of its little-endian 64-bit word b / 64.",
        "// Every field's position and extractor is emitted and each extractor takes the",
        "// whole instruction to read one field, so unused parameters and instruction",
        "// bits say nothing: the waivers are here so that any lint of rtl/ reads them.",
        "/* verilator lint_off UNUSEDPARAM */",
        "/* verilator lint_off UNUSEDSIGNAL */",
        "package strata_isa_pkg;",
        "",
        f"  localparam int unsigned InstrBits = {isa.bits};  // bits per instruction",
        f"  localparam int unsigned InstrBytes = {isa.bits // 8};  // bytes per instruction",
        f"  localparam int unsigned HeaderBits = {isa.header_bits};  // header: bits "
        f"{isa.header_bits - 1}:0",
        "",
        "  typedef logic [InstrBits-1:0] instr_t;",
        "",
    ]
    ow = isa.opcode_field.width
    out.append(f"  typedef enum logic [{ow - 1}:0] {{")
    ops = list(isa.opcodes.items())
    for i, (op, value) in enumerate(ops):
        comma = "," if i + 1 < len(ops) else ""
        out.append(f"    Op{camel(op)} = {ow}'d{value}{comma}")
    out += ["  } opcode_e;", ""]
    for enum_name, values in isa.enums.items():
        if enum_name in isa.sv_types:
            out += [f"  // enum {enum_name}: {isa.sv_types[enum_name]} (same values)", ""]
            continue
        w = isa.enum_width(enum_name)
        out.append(f"  typedef enum logic [{w - 1}:0] {{")
        items = list(values.items())
        for i, (value_name, value) in enumerate(items):
            comma = "," if i + 1 < len(items) else ""
            out.append(f"    {camel(enum_name)}{camel(value_name)} = {w}'d{value}{comma}")
        out += [f"  }} {enum_name}_e;", ""]

    sections = [(None, isa.header)] + list(isa.payloads.items())
    for op, fields in sections:
        title = "Header (every opcode)" if op is None else f"{op} payload"
        out.append(f"  // {title}")
        for f in fields:
            name = f"{sv_prefix(op)}{camel(f.name)}"
            sign = " signed" if f.signed else ""
            out.append(f"  localparam int unsigned {name}Lsb = {f.lsb};")
            out.append(f"  localparam int unsigned {name}Width = {f.width};")
            out.append(f"  typedef logic{sign} [{name}Width-1:0] {sv_type(op, f)};")
        out.append("")
    for op, fields in sections:
        for f in fields:
            name = f"{sv_prefix(op)}{camel(f.name)}"
            func = f"{sv_func_prefix(op)}_{f.name}"
            bits = f"instr[{name}Lsb +: {name}Width]"
            if f.name == "opcode" and op is None:
                rtype, expr = "opcode_e", f"opcode_e'({bits})"
            elif f.enum is not None:
                etype = isa.sv_types.get(f.enum, f"{f.enum}_e")
                rtype, expr = etype, f"{etype}'({bits})"
            elif f.signed:
                rtype, expr = sv_type(op, f), f"$signed({bits})"
            else:
                rtype, expr = sv_type(op, f), bits
            out += [
                f"  // {f.doc}",
                f"  function automatic {rtype} {func}(instr_t instr);",
                f"    return {expr};",
                "  endfunction",
            ]
        out.append("")
    out += [
        "  // The dependency fields of the header (docs/isa.md, Dependencies) as one value:",
        "  // each engine latches it from the instruction it takes and hands it to its",
        "  // dependency sequencer (strata_dep_sync).",
        f"  localparam int unsigned DepCountWidth = {isa.dep_fields[0].width};  // bits per count",
        "  typedef logic [DepCountWidth-1:0] dep_count_t;  // a count of semaphore units",
        "  typedef struct packed {",
    ]
    for f in isa.dep_fields:
        out.append(f"    dep_count_t {f.name};  // {f.doc}")
    out += [
        "  } dep_hdr_t;",
        "",
        "  // The dependency fields of an instruction.",
        "  function automatic dep_hdr_t hdr_deps(instr_t instr);",
        "    dep_hdr_t deps;",
    ]
    for f in isa.dep_fields:
        out.append(f"    deps.{f.name} = hdr_{f.name}(instr);")
    out += [
        "    return deps;",
        "  endfunction",
        "",
    ]
    out.append("  // Bits each opcode uses (header + payload); all others are reserved.")
    for op in isa.payloads:
        words = isa.used_words(op)
        parts = [f"64'h{w:016x}" for w in reversed(words)]
        out.append(f"  localparam instr_t {camel(op)}UsedMask = {{")
        for i in range(0, len(parts), 4):
            chunk = ", ".join(parts[i:i + 4])
            comma = "," if i + 4 < len(parts) else ""
            out.append(f"    {chunk}{comma}")
        out.append("  };")
    out += [
        "",
        "  // 1 when every reserved bit of the instruction is 0 and the opcode is known.",
        "  function automatic logic reserved_bits_clear(instr_t instr);",
        "    logic clear;",
        "    unique case (hdr_opcode(instr))",
    ]
    for op in isa.payloads:
        out.append(f"      Op{camel(op)}: clear = (instr & ~{camel(op)}UsedMask) == '0;")
    out += [
        "      default: clear = 1'b0;",
        "    endcase",
        "    return clear;",
        "  endfunction",
        "",
        "endpackage : strata_isa_pkg",
        "/* verilator lint_on UNUSEDSIGNAL */",
        "/* verilator lint_on UNUSEDPARAM */",
    ]
    return "\n".join(out) + "\n"


# ---- C++ -------------------------------------------------------------------------------------

def cpp_const(name):
    return "k" + camel(name)


def render_hpp(isa):
    out = [
        "// SPDX-License-Identifier: Apache-2.0",
        f"// GENERATED by scripts/gen_isa.py from {SRC}: do not edit.",
        "// Strata instruction encoding (docs/isa.md): opcodes, enumerations and one",
        "// constexpr descriptor {name, lsb, width, is_signed} per field, for the compiler,",
        "// the ISA simulator and the benches. Bit b of an instruction is bit b % 64 of",
        "// its little-endian 64-bit word b / 64. strata/isa.hpp reads and writes fields.",
        "#pragma once",
        "",
        "#include <array>",
        "#include <cstdint>",
        "",
        "namespace strata::isa {",
        "",
        f"inline constexpr int kInstrBits = {isa.bits};",
        f"inline constexpr int kInstrBytes = {isa.bits // 8};",
        f"inline constexpr int kInstrWords = {isa.bits // WORD_BITS};  // 64-bit words",
        f"inline constexpr int kHeaderBits = {isa.header_bits};",
        "",
        "// One instruction field: bits [lsb, lsb + width); two's complement if is_signed.",
        "struct Field {",
        "  const char* name;",
        "  int lsb;",
        "  int width;",
        "  bool is_signed;",
        "};",
        "",
        "enum class Opcode : uint8_t {",
    ]
    for op, value in isa.opcodes.items():
        out.append(f"  {cpp_const(op)} = {value},")
    out += ["};", ""]
    out.append("// Upper-case mnemonic of an opcode value, nullptr if the value is not an opcode.")
    out.append("constexpr const char* opcode_name(uint64_t value) {")
    out.append("  switch (value) {")
    for op, value in isa.opcodes.items():
        out.append(f'    case {value}: return "{op}";')
    out += ["    default: return nullptr;", "  }", "}", ""]
    for enum_name, values in isa.enums.items():
        out.append(f"enum class {camel(enum_name)} : uint8_t {{")
        for value_name, value in values.items():
            out.append(f"  {cpp_const(value_name)} = {value},")
        out += ["};", ""]
        out.append(f"// Name of a {enum_name} value, nullptr if the value is not defined.")
        out.append(f"constexpr const char* {enum_name}_name(uint64_t value) {{")
        out.append("  switch (value) {")
        for value_name, value in values.items():
            out.append(f'    case {value}: return "{value_name}";')
        out += ["    default: return nullptr;", "  }", "}", ""]

    sections = [("hdr", "Header (every opcode)", isa.header)] + [
        (op.lower(), f"{op} payload", fields) for op, fields in isa.payloads.items()]
    for ns, title, fields in sections:
        out.append(f"// {title}")
        out.append(f"namespace {ns} {{")
        for f in fields:
            sign = "true" if f.signed else "false"
            out.append(f'inline constexpr Field {cpp_const(f.name)}{{"{f.name}", {f.lsb}, '
                       f'{f.width}, {sign}}};  // {f.doc}')
        names = ", ".join(cpp_const(f.name) for f in fields)
        out.append(f"inline constexpr std::array<Field, {len(fields)}> kFields{{{{{names}}}}};")
        if ns != "hdr":
            words = isa.used_words(ns.upper())
            out.append("// Bits used (header + payload), word 0 first; all others are reserved.")
            out.append(f"inline constexpr std::array<uint64_t, {len(words)}> kUsedMask{{{{")
            for i in range(0, len(words), 2):
                chunk = ", ".join(f"0x{w:016x}ull" for w in words[i:i + 2])
                out.append(f"    {chunk},")
            out.append("}};")
        out += [f"}}  // namespace {ns}", ""]
    out += ["}  // namespace strata::isa"]
    return "\n".join(out) + "\n"


def render_c(isa):
    """C macros: STRATA_OP_<OP>, STRATA_<ENUM>_<VALUE>, STRATA_<SECTION>_<FIELD>_LSB/_WIDTH."""
    out = [
        "/* SPDX-License-Identifier: Apache-2.0 */",
        f"/* GENERATED by scripts/gen_isa.py from {SRC}: do not edit. */",
        "/* Strata instruction encoding for C (docs/isa.md): opcodes, enumeration values and",
        " * field positions. Bit b of an instruction is bit b % 8 of its byte b / 8. */",
        "#ifndef STRATA_ISA_H",
        "#define STRATA_ISA_H",
        "",
        f"#define STRATA_INSTR_BYTES {isa.bits // 8}u",
        "",
    ]
    for op, value in isa.opcodes.items():
        out.append(f"#define STRATA_OP_{op} {value}u")
    out.append("")
    for enum_name, values in isa.enums.items():
        for value_name, value in values.items():
            out.append(f"#define STRATA_{enum_name.upper()}_{value_name} {value}u")
    sections = [("HDR", isa.header)] + [(op, fields) for op, fields in isa.payloads.items()]
    for sec, fields in sections:
        out.append("")
        for f in fields:
            out.append(f"#define STRATA_{sec}_{f.name.upper()}_LSB {f.lsb}u")
            out.append(f"#define STRATA_{sec}_{f.name.upper()}_WIDTH {f.width}u")
    out += ["", "#endif /* STRATA_ISA_H */"]
    return "\n".join(out) + "\n"


def cpp_struct(op):
    return camel(op) + "Instr"


def cpp_member(isa, f):
    """(type, default initialiser, encode expression, decode expression) of a struct member.
    Enum fields have their enum's type (decoded without a range check: the ISA simulator
    and the hardware reject unknown values), 1-bit unsigned fields are flags (bool), every
    other field is an int64_t that encode() range-checks (Instruction::set)."""
    desc = cpp_const(f.name)
    if f.enum is not None:
        etype = camel(f.enum)
        value_name = next(n for n, v in isa.enums[f.enum].items() if v == f.default)
        return (etype, f"{etype}::{cpp_const(value_name)}",
                f"static_cast<int64_t>(in.{f.name})",
                f"static_cast<{etype}>(instr.raw({{ns}}::{desc}))")
    if f.width == 1 and not f.signed:
        return ("bool", "true" if f.default else "false", f"in.{f.name} ? 1 : 0",
                f"instr.raw({{ns}}::{desc}) != 0")
    return ("int64_t", str(f.default), f"in.{f.name}", f"instr.get({{ns}}::{desc})")


def render_struct(isa, name, fields, comment, with_header):
    out = [f"// {comment}", f"struct {name} {{"]
    if with_header:
        out.append("  Header hdr;")
    for f in fields:
        ctype, init, _, _ = cpp_member(isa, f)
        out.append(f"  {ctype} {f.name} = {init};  // {f.doc}")
    out += [f"  bool operator==(const {name}&) const = default;", "};", ""]
    return out


def render_codec(isa):
    header = [f for f in isa.header if f is not isa.opcode_field]
    out = [
        "// SPDX-License-Identifier: Apache-2.0",
        f"// GENERATED by scripts/gen_isa.py from {SRC}: do not edit.",
        "// Strata instruction encoding (docs/isa.md), per opcode: a struct with one member",
        "// per field, encode() from struct to bits and decode_<op>() from bits to struct,",
        "// both through the field descriptors of strata/isa_fields.hpp. encode() starts",
        "// from all-zero bits (reserved bits stay 0) and writes every field with",
        "// Instruction::set, which throws strata::Error naming the field when a value does",
        "// not fit it. decode_<op>() throws strata::Error when the opcode is another one;",
        "// enum fields are cast without checking (the ISA simulator checks them).",
        "// This is the tail of strata/isa.hpp, whose Instruction it uses: include that.",
        "#pragma once",
        "",
        "#include <cstdint>",
        "",
        "#include \"strata/isa_fields.hpp\"",
        "",
        "namespace strata::isa {",
        "",
    ]
    out += render_struct(isa, "Header", header,
                         "Header fields shared by every opcode (encode() sets the opcode).", False)
    out += ["// Writes every header field but the opcode.",
            "inline void encode_header(Instruction& instr, const Header& in) {"]
    out += [f"  instr.set(hdr::{cpp_const(f.name)}, {cpp_member(isa, f)[2]});" for f in header]
    out += ["}", "", "inline Header decode_header(const Instruction& instr) {", "  Header out;"]
    out += [f"  out.{f.name} = {cpp_member(isa, f)[3].format(ns='hdr')};" for f in header]
    out += ["  return out;", "}", ""]
    for op, fields in isa.payloads.items():
        ns = op.lower()
        name = cpp_struct(op)
        out += render_struct(isa, name, fields, f"{op} (opcode {isa.opcodes[op]}).", True)
        out += [f"inline Instruction encode(const {name}& in) {{",
                "  Instruction instr;",
                f"  instr.set(hdr::kOpcode, static_cast<int64_t>(Opcode::{cpp_const(op)}));",
                "  encode_header(instr, in.hdr);"]
        out += [f"  instr.set({ns}::{cpp_const(f.name)}, {cpp_member(isa, f)[2]});"
                for f in fields]
        out += ["  return instr;", "}", ""]
        out += [f"inline {name} decode_{ns}(const Instruction& instr) {{",
                f"  instr.expect_opcode(Opcode::{cpp_const(op)});",
                f"  {name} out;",
                "  out.hdr = decode_header(instr);"]
        out += [f"  out.{f.name} = {cpp_member(isa, f)[3].format(ns=ns)};" for f in fields]
        out += ["  return out;", "}", ""]
    out += ["}  // namespace strata::isa"]
    return "\n".join(out) + "\n"


# ---- Markdown --------------------------------------------------------------------------------

def field_type(f):
    if f.enum is not None:
        return f"enum `{f.enum}`"
    if f.name == "opcode":
        return "opcode"
    return "signed" if f.signed else "unsigned"


def bits_text(f):
    return str(f.lsb) if f.width == 1 else f"{f.msb}:{f.lsb}"


def render_md(isa):
    out = [
        BEGIN,
        "",
        f"<!-- Generated by scripts/gen_isa.py from {SRC}; edit the YAML and rerun. -->",
        "",
        "### Opcodes",
        "",
        "| opcode | value |",
        "|---|---|",
    ]
    for op, value in isa.opcodes.items():
        out.append(f"| `{op}` | {value} |")
    out += ["", "### Enumerations", "", "| enum | values |", "|---|---|"]
    for enum_name, values in isa.enums.items():
        vals = ", ".join(f"`{n}` = {v}" for n, v in values.items())
        out.append(f"| `{enum_name}` | {vals} |")
    sections = [("Header (bits 127:0, every opcode)", isa.header)] + [
        (f"{op} (bits {isa.bits - 1}:{isa.header_bits})", fields)
        for op, fields in isa.payloads.items()]
    for title, fields in sections:
        out += ["", f"### {title}", ""]
        if not fields:
            out.append("No payload fields: bits "
                       f"{isa.bits - 1}:{isa.header_bits} are reserved (0).")
            continue
        out += ["| field | bits | width | type | meaning |", "|---|---|---|---|---|"]
        for f in sorted(fields, key=lambda x: x.lsb):
            out.append(f"| `{f.name}` | {bits_text(f)} | {f.width} | {field_type(f)} | "
                       f"{f.doc} |")
    out += ["", "Every bit not listed for an opcode is reserved and must be 0.", "", END]
    return "\n".join(out) + "\n"


def splice_doc(text, generated):
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        return head + generated.rstrip("\n") + tail
    if BEGIN in text or END in text:
        raise IsaError(f"{DOC_OUT}: only one of the generated-fields markers is present")
    return text.rstrip("\n") + "\n\n## Field tables\n\n" + generated


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare, do not write")
    ap.add_argument("--source", default=SRC,
                    help=f"encoding to read (default {SRC}); another file only with --check "
                         "or --out-dir")
    ap.add_argument("--out-dir", type=pathlib.Path,
                    help="write the outputs under this directory (same relative paths; "
                         f"{DOC_OUT} spliced into the repository's copy) instead of the "
                         "repository: how a test builds the views of another encoding")
    args = ap.parse_args()
    if args.source != SRC and not (args.check or args.out_dir):
        ap.error("--source other than the default needs --check or --out-dir "
                 "(the outputs are committed)")
    out_root = args.out_dir.resolve() if args.out_dir else ROOT
    try:
        with open(ROOT / args.source) as f:
            isa = Isa(yaml.safe_load(f))
        outputs = {
            SV_OUT: render_sv(isa),
            HPP_OUT: render_hpp(isa),
            CODEC_OUT: render_codec(isa),
            C_OUT: render_c(isa),
            DOC_OUT: splice_doc((ROOT / DOC_OUT).read_text(), render_md(isa)),
        }
    except IsaError as e:
        print(f"{args.source}: {e}", file=sys.stderr)
        return 1
    except (OSError, yaml.YAMLError) as e:
        print(f"{args.source}: {e}", file=sys.stderr)
        return 1
    stale = []
    for rel, text in outputs.items():
        path = out_root / rel
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(rel)
        elif not path.exists() or path.read_text() != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    if stale:
        print("out of date (run scripts/gen_isa.py):", ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
