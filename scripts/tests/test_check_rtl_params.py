#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Self-test of scripts/check_rtl_params.py: a tree that passes a configuration
parameter down passes; one that leaves it at the package default, or reads a
configuration value from the package below the top, fails and names the line."""
import pathlib
import subprocess
import sys
import tempfile
import unittest

CHECK = pathlib.Path(__file__).resolve().parent.parent / "check_rtl_params.py"

CHILD = """module strata_child #(
  parameter int unsigned Lanes = strata_cfg_pkg::Lanes,  // N
  parameter int unsigned Depth = 4                        // a design choice
) (input logic clk_i);
endmodule
"""


def parent(params: str, body: str = "") -> str:
    return f"""module strata_parent #(
  parameter int unsigned Lanes = strata_cfg_pkg::Lanes
) (input logic clk_i);
{body}
  strata_child #({params}) u_child (
    .clk_i (clk_i)
  );
endmodule
"""


class CheckRtlParams(unittest.TestCase):
    def run_check(self, files: dict[str, str]) -> subprocess.CompletedProcess:
        with tempfile.TemporaryDirectory() as d:
            rtl = pathlib.Path(d) / "rtl" / "sub"
            rtl.mkdir(parents=True)
            for name, text in files.items():
                (rtl / name).write_text(text)
            return subprocess.run([sys.executable, str(CHECK), "--root", d],
                                  capture_output=True, text=True)

    def test_passed_down(self):
        r = self.run_check({"strata_child.sv": CHILD,
                            "strata_parent.sv": parent(".Lanes (Lanes)")})
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_left_at_default(self):
        r = self.run_check({"strata_child.sv": CHILD,
                            "strata_parent.sv": parent(".Depth (8)")})
        self.assertEqual(r.returncode, 1)
        self.assertIn("rtl/sub/strata_parent.sv:5: u_child (strata_child) leaves Lanes", r.stdout)

    def test_no_parameters_given(self):
        text = parent("").replace("strata_child #() u_child", "strata_child u_child")
        r = self.run_check({"strata_child.sv": CHILD, "strata_parent.sv": text})
        self.assertEqual(r.returncode, 1)
        self.assertIn("leaves Lanes", r.stdout)

    def test_package_read_below_top(self):
        body = "  localparam int unsigned Banks = strata_cfg_pkg::Banks;"
        r = self.run_check({"strata_child.sv": CHILD,
                            "strata_parent.sv": parent(".Lanes (Lanes)", body)})
        self.assertEqual(r.returncode, 1)
        self.assertIn("strata_parent.sv:4: reads configuration value strata_cfg_pkg::Banks",
                      r.stdout)

    def test_number_format_may_be_read(self):
        body = "  localparam int unsigned W = strata_cfg_pkg::DataWidth;"
        r = self.run_check({"strata_child.sv": CHILD,
                            "strata_parent.sv": parent(".Lanes (Lanes)", body)})
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main()
