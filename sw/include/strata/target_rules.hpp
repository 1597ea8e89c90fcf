// SPDX-License-Identifier: Apache-2.0
// The legality rules of a hardware target, written once (docs/isa.md, "Target
// rules"): every limit a LOAD, COMPUTE or STORE instruction (or a parameter
// entry a LOAD brings in) must respect to run on a configuration, with the
// configuration parameter that bounds it. The compiler checks every
// instruction it emits against this table, strata::IsaSim stops a run with
// UNSUPPORTED on the first rule an instruction breaks (the table's message),
// `strata rules` prints it and writes the section of docs/isa.md, and the RTL
// benches run each rule's boundary instructions (just legal, just illegal) on
// the decoder that enforces it and compare its error code with the table's
// verdict.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "strata/hw_target.hpp"
#include "strata/isa.hpp"

namespace strata {

// A parameter RAM entry as a LOAD to PARAM brings it in (bytes 6 and 7 of the
// 8-byte entry; docs/isa.md, LOAD).
struct ParamEntry {
  int64_t channel = 0;
  int shift = 0;  // byte 6: requantisation shift S
  int byte7 = 0;  // byte 7: reserved, zero
  bool operator==(const ParamEntry&) const = default;
};

// What a rule judges: a decoded instruction or a parameter entry.
using RuleSubject = std::variant<isa::LoadInstr, isa::ComputeInstr, isa::StoreInstr, ParamEntry>;

// Two instructions on either side of a rule's limit for a target: `legal`
// passes every rule, `illegal` breaks this rule first (and no other rule
// before it in the table).
struct RuleBoundary {
  RuleSubject legal;
  RuleSubject illegal;
};

struct TargetRule {
  std::string_view id;           // "conv.kernel"
  std::string_view description;  // one line
  std::string_view applies;      // instruction, mode and fields: "COMPUTE CONV: kernel_h, kernel_w"
  std::string_view parameter;    // configuration parameter that bounds it; "" = an ISA rule
                                 // (no configuration lifts it)
  std::string_view rtl;          // RTL module(s) that refuse it with UNSUPPORTED; "" = not
                                 // checked by the RTL (compiler and ISA simulator only)
  // nullopt when `s` obeys the rule or the rule does not apply to it; else what
  // is wrong, with the values and the limit. A rule judges only what it owns:
  // when a field it builds on is itself illegal (a stride of 0 for an output
  // size), an earlier rule of the table reports that and this one passes.
  std::optional<std::string> (*check)(const RuleSubject& s, const HwTarget& t);
  // Boundary instructions for `t` (one pair per mode or opcode the rule covers).
  std::vector<RuleBoundary> (*boundaries)(const HwTarget& t);
};

// Every rule, in the order the checks run (the first failing one is reported).
const std::vector<TargetRule>& target_rules();
// The rule with this id; throws strata::Error for an unknown id.
const TargetRule& target_rule(std::string_view id);

struct RuleViolation {
  const TargetRule* rule = nullptr;
  std::string message;  // the check's text, the configuration parameter and the rule id
};

// The message of a violation of `rule`: "<what>; bounded by <parameter> in the
// hardware configuration [rule <id>]" (ISA rules: "<what> [rule <id>]").
std::string violation_message(const TargetRule& rule, const std::string& what);

// The first rule `s` breaks on `t`, or nullopt.
std::optional<RuleViolation> first_violation(const RuleSubject& s, const HwTarget& t);
// Every rule `s` breaks on `t`, in table order.
std::vector<RuleViolation> violations(const RuleSubject& s, const HwTarget& t);

// The table as the Markdown section of docs/isa.md (between the markers below).
std::string rules_markdown();
inline constexpr std::string_view kRulesBegin = "<!-- BEGIN GENERATED RULES -->";
inline constexpr std::string_view kRulesEnd = "<!-- END GENERATED RULES -->";
// `doc` with the text between the markers replaced by rules_markdown(); throws
// strata::Error when the markers are missing.
std::string with_rules_section(const std::string& doc);

}  // namespace strata
