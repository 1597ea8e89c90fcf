# SPDX-License-Identifier: Apache-2.0
"""Runs work items in parallel: one process per run, in its own process group,
killed (group and all) when it outlives its timeout, so a hang is a failure
and never a stuck night. Tests that share a ctest RESOURCE_LOCK never run at
the same time."""
from __future__ import annotations

import dataclasses
import hashlib
import os
import pathlib
import re
import signal
import subprocess
import sys
import threading
import time

from .worklist import GTEST_SHARD_VARS, Test, WorkItem

TAIL_LINES = 40  # lines of output kept in results and JUnit for a failing run
KILL_GRACE_S = 5.0
SEED_ECHO = re.compile(r"STRATA_SEED=(\d+)")

PASSED, FAILED, TIMEOUT, SKIPPED = "passed", "failed", "timeout", "skipped"


@dataclasses.dataclass
class Result:
    test: str
    seed: int | None
    label: str
    outcome: str          # passed | failed | timeout | skipped
    duration: float       # seconds
    message: str = ""     # why it failed or was skipped
    tail: str = ""        # last lines of output (failures only)
    log: str = ""         # log file, relative to the run directory
    seed_echoed: bool = True  # a random run printed STRATA_SEED=<its seed>

    @property
    def ok(self) -> bool:
        return self.outcome in (PASSED, SKIPPED)

    @property
    def item(self) -> WorkItem:
        return WorkItem(self.test, self.seed)


def log_name(item: WorkItem) -> str:
    """A file name per run: readable, and unique even when two test names
    differ only in characters a file name cannot hold."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", item.test)[:150]
    digest = hashlib.sha1(item.test.encode()).hexdigest()[:6]
    return f"{safe}-{digest}.{item.seed_text}.log"


def child_env(test: Test, item: WorkItem, coverage_dir: pathlib.Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in GTEST_SHARD_VARS and k != "STRATA_SEED"}
    env.update(dict(test.environment))
    if item.seed is not None:
        env["STRATA_SEED"] = str(item.seed)
    if coverage_dir is not None:
        env["STRATA_COVERAGE_DIR"] = str(coverage_dir)
    return env


def _tail(text: str, lines: int = TAIL_LINES) -> str:
    return "\n".join(text.splitlines()[-lines:])


def judge(test: Test, item: WorkItem, returncode: int, output: str) -> tuple[str, str]:
    """(outcome, message) for a run that ended, by ctest's rules."""
    if returncode < 0:
        name = signal.Signals(-returncode).name if -returncode in signal.valid_signals() else ""
        return FAILED, f"killed by signal {-returncode} {name}".rstrip()
    if test.skip_return_code is not None and returncode == test.skip_return_code:
        return SKIPPED, f"skipped (exit status {returncode})"
    if any(re.search(rx, output) for rx in test.skip_regex):
        return SKIPPED, "skipped (output matched the skip expression)"
    failed = returncode != 0
    message = f"exit status {returncode}"
    if test.pass_regex:
        failed = not any(re.search(rx, output) for rx in test.pass_regex)
        message = "output did not match the pass expression"
    if any(re.search(rx, output) for rx in test.fail_regex):
        failed, message = True, "output matched the fail expression"
    if test.will_fail:
        failed = not failed
        message = "expected to fail (WILL_FAIL) but passed"
    return (FAILED, message) if failed else (PASSED, "")


class Runner:
    def __init__(self, tests: dict[str, Test], run_dir: pathlib.Path, jobs: int,
                 default_timeout: float, label_of, coverage_dir: pathlib.Path | None = None,
                 progress=sys.stdout):
        self.tests = tests
        self.run_dir = run_dir
        self.jobs = max(1, jobs)
        self.default_timeout = default_timeout
        self.label_of = label_of
        self.coverage_dir = coverage_dir
        self.progress = progress
        self._cond = threading.Condition()
        self._running: set[subprocess.Popen] = set()
        self._stopping = False

    def run_one(self, item: WorkItem) -> Result:
        test = self.tests[item.test]
        label = self.label_of(test)
        rel_log = pathlib.Path("logs") / log_name(item)
        log_path = self.run_dir / rel_log
        timeout = test.timeout or self.default_timeout
        start = time.monotonic()
        if not test.command:
            message = "ctest lists no command (executable not built?)"
            log_path.write_text(message + "\n")
            return Result(item.test, item.seed, label, FAILED, 0.0, message, tail=message,
                          log=str(rel_log))
        with open(log_path, "wb") as log:
            log.write(f"$ {' '.join(test.command)}\n# cwd {test.cwd}, STRATA_SEED="
                      f"{item.seed_text}\n".encode())
            log.flush()
            try:
                proc = subprocess.Popen(list(test.command), cwd=test.cwd,
                                        env=child_env(test, item, self.coverage_dir),
                                        stdin=subprocess.DEVNULL, stdout=log,
                                        stderr=subprocess.STDOUT, start_new_session=True)
            except OSError as e:
                return Result(item.test, item.seed, label, FAILED, 0.0,
                              f"cannot start {test.command[0]}: {e.strerror}", log=str(rel_log))
            with self._cond:
                self._running.add(proc)
            timed_out = False
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                self._kill(proc)
            finally:
                with self._cond:
                    self._running.discard(proc)
        duration = time.monotonic() - start
        output = log_path.read_text(errors="replace")
        if timed_out:
            outcome, message = TIMEOUT, f"timed out after {timeout:g} s (process group killed)"
        else:
            outcome, message = judge(test, item, proc.returncode, output)
        echoed = item.seed is None or any(int(s) == item.seed for s in SEED_ECHO.findall(output))
        return Result(item.test, item.seed, label, outcome, duration, message,
                      tail=_tail(output) if outcome in (FAILED, TIMEOUT) else "",
                      log=str(rel_log), seed_echoed=echoed)

    @staticmethod
    def _kill(proc: subprocess.Popen) -> None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout=KILL_GRACE_S)
                return
            except subprocess.TimeoutExpired:
                continue

    def run(self, items: list[WorkItem]) -> list[Result]:
        """Runs every item; returns results in the order of `items`."""
        (self.run_dir / "logs").mkdir(parents=True, exist_ok=True)
        pending = list(items)
        held: set[str] = set()
        results: dict[WorkItem, Result] = {}
        done = [0]
        width = len(str(len(items)))

        def take() -> WorkItem | None:
            with self._cond:
                while True:
                    if not pending or self._stopping:
                        return None
                    for k, item in enumerate(pending):
                        locks = self.tests[item.test].locks
                        if not locks & held:
                            held.update(locks)
                            return pending.pop(k)
                    self._cond.wait()

        def worker() -> None:
            while (item := take()) is not None:
                try:
                    result = self.run_one(item)
                finally:
                    with self._cond:
                        held.difference_update(self.tests[item.test].locks)
                        self._cond.notify_all()
                with self._cond:
                    results[item] = result
                    done[0] += 1
                    tag = {PASSED: "PASS", FAILED: "FAIL", TIMEOUT: "HANG", SKIPPED: "SKIP"}
                    print(f"[{done[0]:>{width}}/{len(items)}] {tag[result.outcome]} "
                          f"{item.test} seed={item.seed_text} {result.duration:.1f} s"
                          + (f"  ({result.message})" if result.message else ""),
                          file=self.progress, flush=True)

        threads = [threading.Thread(target=worker, daemon=True)
                   for _ in range(min(self.jobs, max(1, len(items))))]
        for t in threads:
            t.start()
        try:
            for t in threads:
                while t.is_alive():
                    t.join(timeout=0.5)
        except KeyboardInterrupt:
            with self._cond:
                self._stopping = True
                running = list(self._running)
            for proc in running:
                self._kill(proc)
            raise
        return [results[item] for item in items]
