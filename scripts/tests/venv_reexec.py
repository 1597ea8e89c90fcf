# SPDX-License-Identifier: Apache-2.0
"""Re-run a test script with the project venv's python (.venv: numpy, onnx, onnxruntime).

The test scripts are started by ctest with whatever python CMake found; when that is not the
venv's and the venv exists, reexec_in_venv() replaces the process with the same script under
.venv/bin/python (once: `flag` in the environment marks the re-run)."""
import os
import sys


def reexec_in_venv(source, flag):
    py = os.path.join(source, ".venv", "bin", "python")
    # The venv's python is a symlink to the system one: compare the prefixes.
    if os.path.realpath(sys.prefix) != os.path.realpath(os.path.join(source, ".venv")) and \
            os.path.exists(py) and not os.environ.get(flag):
        os.environ[flag] = "1"
        os.execv(py, [py] + sys.argv)
