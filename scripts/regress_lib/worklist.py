# SPDX-License-Identifier: Apache-2.0
"""What a regression runs: the tests ctest knows, the seeds of the night, the
work list (test x seed), its partition into shards, and rerun files.

A test is *random* when it carries the ctest label "random" (tb/CMakeLists.txt
gives it to every SimFixture bench, tb/network/network.cmake to the network
tests, sw/tests/compiler_tests.cmake to RandomNetworks): it runs once per seed
with STRATA_SEED set. Every other test runs once, with STRATA_SEED unset.
"""
from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import os
import pathlib
import re
import subprocess

RANDOM_LABEL = "random"
DEFAULT_LABELS = ("unit", "network", "lint")
ONCE = "once"  # the seed column of a test that runs once
# GoogleTest's own sharding variables: read as a fallback for --shard, and
# never passed on (a gtest binary would otherwise drop the test it was given).
GTEST_SHARD_VARS = ("GTEST_SHARD_INDEX", "GTEST_TOTAL_SHARDS", "GTEST_SHARD_STATUS_FILE")


class RegressError(Exception):
    """A user error (bad option, missing build, malformed file): exit status 2."""


@dataclasses.dataclass(frozen=True)
class Test:
    """One ctest test and the properties the runner honours."""

    name: str
    command: tuple[str, ...]
    labels: tuple[str, ...] = ()
    cwd: str = "."
    environment: tuple[tuple[str, str], ...] = ()
    timeout: float | None = None
    skip_return_code: int | None = None
    skip_regex: tuple[str, ...] = ()
    pass_regex: tuple[str, ...] = ()
    fail_regex: tuple[str, ...] = ()
    will_fail: bool = False
    locks: frozenset[str] = frozenset()
    disabled: bool = False

    @property
    def random(self) -> bool:
        return RANDOM_LABEL in self.labels


@dataclasses.dataclass(frozen=True, order=True)
class WorkItem:
    """One run: a test with a seed, or a test that runs once (seed None)."""

    test: str
    seed: int | None

    @property
    def seed_text(self) -> str:
        return ONCE if self.seed is None else str(self.seed)

    @property
    def key(self) -> str:
        return f"{self.test}\t{self.seed_text}"


# ---------------------------------------------------------------- ctest list


def _as_list(value) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def parse_ctest_json(text: str, build: pathlib.Path) -> list[Test]:
    """Tests from `ctest --show-only=json-v1` output."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise RegressError(f"ctest --show-only=json-v1 gave invalid JSON: {e}") from e
    tests = []
    for entry in doc.get("tests", []):
        props = {p["name"]: p.get("value") for p in entry.get("properties", [])}
        env = []
        for assignment in _as_list(props.get("ENVIRONMENT")):
            name, sep, value = str(assignment).partition("=")
            if sep:
                env.append((name, value))
        skip_code = props.get("SKIP_RETURN_CODE")
        timeout = props.get("TIMEOUT")
        tests.append(Test(
            name=entry["name"],
            command=tuple(entry.get("command", [])),
            labels=tuple(_as_list(props.get("LABELS"))),
            cwd=str(props.get("WORKING_DIRECTORY") or build),
            environment=tuple(env),
            timeout=float(timeout) if timeout else None,
            skip_return_code=int(skip_code) if skip_code is not None else None,
            skip_regex=tuple(_as_list(props.get("SKIP_REGULAR_EXPRESSION"))),
            pass_regex=tuple(_as_list(props.get("PASS_REGULAR_EXPRESSION"))),
            fail_regex=tuple(_as_list(props.get("FAIL_REGULAR_EXPRESSION"))),
            will_fail=bool(props.get("WILL_FAIL", False)),
            locks=frozenset(_as_list(props.get("RESOURCE_LOCK"))),
            disabled=bool(props.get("DISABLED", False)),
        ))
    return tests


def load_ctest(build: pathlib.Path) -> list[Test]:
    """Every test of a configured build directory, as ctest lists it."""
    if not (build / "CTestTestfile.cmake").is_file():
        raise RegressError(f"{build}: not a configured build directory (no CTestTestfile.cmake); "
                           f"run cmake -S . -B {build} first")
    try:
        proc = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build, capture_output=True,
                              text=True, timeout=600, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RegressError(f"ctest --show-only=json-v1 in {build}: {e}") from e
    if proc.returncode != 0:
        raise RegressError(f"ctest --show-only=json-v1 failed in {build}:\n{proc.stderr[-2000:]}")
    return parse_ctest_json(proc.stdout, build)


def parse_extra_test(spec: str) -> Test:
    """--extra-test NAME:LABEL[,LABEL...]:SHELL-COMMAND (a test ctest does not know)."""
    parts = spec.split(":", 2)
    if len(parts) != 3 or not parts[0] or not parts[2]:
        raise RegressError(f"--extra-test {spec!r}: expected NAME:LABELS:COMMAND")
    labels = tuple(label for label in parts[1].split(",") if label)
    return Test(name=parts[0], command=("/bin/sh", "-c", parts[2]), labels=labels,
                cwd=os.getcwd())


def select_tests(tests: list[Test], labels: list[str] | None, include: str | None = None,
                 exclude: str | None = None) -> list[Test]:
    """Tests with any of `labels` (None: DEFAULT_LABELS; ["all"]: every label),
    whose name matches `include` and not `exclude` (regular expressions)."""
    wanted = set(DEFAULT_LABELS if labels is None else labels)
    try:
        inc = re.compile(include) if include else None
        exc = re.compile(exclude) if exclude else None
    except re.error as e:
        raise RegressError(f"bad test name pattern: {e}") from e
    chosen = []
    for t in tests:
        if t.disabled:
            continue
        if "all" not in wanted and not wanted.intersection(t.labels):
            continue
        if inc and not inc.search(t.name):
            continue
        if exc and exc.search(t.name):
            continue
        chosen.append(t)
    if not chosen:
        raise RegressError(f"no test has label {','.join(sorted(wanted))}"
                           + (f" and matches {include!r}" if include else "")
                           + (f" and not {exclude!r}" if exclude else ""))
    names = [t.name for t in chosen]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise RegressError(f"test names are not unique: {', '.join(duplicates)}")
    return chosen


# ---------------------------------------------------------------- seeds


def default_base_seed(now: datetime.datetime | None = None) -> int:
    """The night's base seed: the UTC date as YYYYMMDD (same on every shard
    started that day; pass --base-seed when shards may straddle midnight)."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    return int(now.strftime("%Y%m%d"))


def derive_seeds(base: int, count: int) -> list[int]:
    """`count` distinct seeds in 1 .. 2^31 - 1 derived from `base`. The bench
    gives the low 31 bits to Verilator's randSeed, where 0 would mean "pick
    one at random", so 0 is never produced."""
    seeds: list[int] = []
    j = 0
    while len(seeds) < count:
        digest = hashlib.sha256(f"strata-regress/{base}/{j}".encode()).digest()
        seed = int.from_bytes(digest[:4], "big") % 0x7FFFFFFE + 1
        if seed not in seeds:
            seeds.append(seed)
        j += 1
    return seeds


# ---------------------------------------------------------------- work list


def make_worklist(tests: list[Test], seeds: list[int]) -> list[WorkItem]:
    """Random tests x seeds, other tests once; sorted by test name, then seed
    order, so that every machine builds the same list from the same build."""
    items = []
    for t in sorted(tests, key=lambda t: t.name):
        if t.random:
            items.extend(WorkItem(t.name, s) for s in seeds)
        else:
            items.append(WorkItem(t.name, None))
    return items


def fingerprint(items: list[WorkItem]) -> str:
    """Identifies a whole (unsharded) work list; shards of one regression agree on it."""
    return hashlib.sha256("\n".join(i.key for i in items).encode()).hexdigest()[:16]


def parse_shard(spec: str) -> tuple[int, int]:
    """'i/n' (i = 0 .. n-1, as GTEST_SHARD_INDEX) -> (i, n)."""
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", spec)
    if not m:
        raise RegressError(f"--shard {spec!r}: expected INDEX/TOTAL, e.g. 0/4")
    index, total = int(m.group(1)), int(m.group(2))
    if total < 1 or index >= total:
        raise RegressError(f"--shard {spec!r}: need TOTAL >= 1 and 0 <= INDEX < TOTAL")
    return index, total


def shard_from_env(env: dict[str, str]) -> tuple[int, int] | None:
    """GTEST_SHARD_INDEX / GTEST_TOTAL_SHARDS, as a CI matrix may set them."""
    index, total = env.get("GTEST_SHARD_INDEX"), env.get("GTEST_TOTAL_SHARDS")
    if index is None and total is None:
        return None
    if index is None or total is None:
        raise RegressError("GTEST_SHARD_INDEX and GTEST_TOTAL_SHARDS must be set together")
    return parse_shard(f"{index}/{total}")


def shard(items: list[WorkItem], index: int, total: int) -> list[WorkItem]:
    """Shard `index` of `total`: every total-th item of the sorted list, so the
    shards are disjoint, together complete, and differ in size by one at most."""
    return [item for k, item in enumerate(items) if k % total == index]


# ---------------------------------------------------------------- rerun files

RERUN_HEADER = ("# Failing runs of a Strata regression. `scripts/regress --rerun <this file>`\n"
                "# runs exactly these again (same tests, same seeds).\n")


def write_rerun(path: pathlib.Path, items: list[WorkItem], meta: dict[str, str]) -> None:
    lines = [RERUN_HEADER]
    lines += [f"# {key}: {value}\n" for key, value in meta.items()]
    lines.append(f"# test<TAB>seed ('{ONCE}': the test takes no seed)\n")
    lines += [item.key + "\n" for item in items]
    path.write_text("".join(lines))


def read_rerun(path: pathlib.Path) -> tuple[list[WorkItem], dict[str, str]]:
    """Work items and header fields (`# key: value`) of a rerun file."""
    try:
        text = path.read_text()
    except OSError as e:
        raise RegressError(f"--rerun: cannot read {path}: {e.strerror}") from e
    items: list[WorkItem] = []
    meta: dict[str, str] = {}
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            m = re.fullmatch(r"#\s*([a-z_]+):\s*(.*)", line)
            if m:
                meta[m.group(1)] = m.group(2)
            continue
        parts = line.rsplit(None, 1)
        if len(parts) != 2:
            raise RegressError(f"{path}:{lineno}: expected '<test> <seed>', got {raw!r}")
        name, seed_text = parts
        if seed_text == ONCE:
            seed = None
        else:
            try:
                seed = int(seed_text, 0)
            except ValueError:
                seed = -1
            if seed <= 0:
                raise RegressError(f"{path}:{lineno}: seed {seed_text!r} is not a positive "
                                   f"integer or '{ONCE}'")
        item = WorkItem(name, seed)
        if item not in items:
            items.append(item)
    if not items:
        raise RegressError(f"{path}: no runs listed")
    return items, meta
