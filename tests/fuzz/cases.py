"""Broken inputs for every command and input kind, drawn from a seed, and a sandboxed runner.

Each case is one command line (``explain`` with cluster, pod and configuration files, or
``simulate`` with a scenario) and its files, made from real inputs (the bundled examples
and scenarios) by one of: type confusion at a random field path, a YAML spelling
(``y``, ``1:00``, ``!!binary``...), truncation, byte mutation, an alias bomb, deep
nesting, huge numbers and long strings, the same objects twice, or a special file (a
FIFO, ``/dev/zero``, a folder, a missing file). :func:`run_case` runs it in a forked
child under a memory limit and a timeout and reports what happened.
"""

from __future__ import annotations

import json
import os
import random
import resource
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from topospread.io.loader import parse_documents

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "src" / "topospread" / "examples"
CONFIG = REPO / "oracle" / "testdata" / "engine-profile.yaml"
MEMORY_LIMIT = 2 * 1024**3
TIME_LIMIT = 20.0


@dataclass
class Case:
    """One command line and the files it reads."""

    number: int
    kind: str
    """What was done to the input (``type-confusion``, ``truncate``, ...)."""
    command: str
    files: dict[str, bytes] = field(default_factory=dict)
    """Name (relative to the case folder) to content; the first is the one mutated."""
    special: dict[str, str] = field(default_factory=dict)
    """Name to ``fifo``, ``dev-zero``, ``folder`` or ``missing``."""
    roles: dict[str, str] = field(default_factory=dict)
    """Name to ``cluster``, ``pod``, ``config`` or ``scenario``."""


@dataclass
class Outcome:
    case: Case
    exit_code: int | None
    """None when the child was killed (timeout, signal)."""
    stdout: str
    stderr: str
    seconds: float
    max_rss_bytes: int
    signal: int | None = None

    def problems(self, folder: Path) -> list[str]:
        """What is wrong with this outcome; empty when the case was handled well."""
        found = []
        if self.signal is not None:
            found.append(f"killed by signal {self.signal}")
        elif self.exit_code not in (0, 1, 2):
            found.append(f"exit status {self.exit_code}")
        if "Traceback" in self.stderr or "Traceback" in self.stdout:
            found.append("traceback")
        if self.seconds > TIME_LIMIT:
            found.append(f"ran {self.seconds:.1f} s")
        if self.max_rss_bytes > MEMORY_LIMIT:
            found.append(f"used {self.max_rss_bytes / 2**30:.2f} GiB")
        if self.exit_code == 2 and not self.stderr.lstrip().startswith("Usage:"):
            names = [str(folder / name) for name in self.case.roles] + ["<stdin>"]
            for line in self.stderr.splitlines():
                if not line or line.startswith("note:"):
                    continue
                if not any(line.startswith(name) or f" {name}" in line for name in names):
                    found.append(f"a line names no file: {line[:200]}")
                    break
                if "None" in line.split(": ", 1)[-1].split() or "(None" in line:
                    found.append(f"a Python None in: {line[:200]}")
                    break
        return found


# -- mutations -----------------------------------------------------------------------------------

SPELLINGS = [
    "y", "Y", "yes", "no", "on", "off", "n", "~", "null", "1:00", "1e0", "0o1", "012", "0x1F",
    "1_000", "+5", ".inf", "-.Inf", ".nan", "2024-01-01", "2023-02-29", "2024-01-01T00:00:00Z",
    "!!binary aGVsbG8=", "!!binary ***", "!!set {a, b}", "!!int abc", "!!bool maybe",
    "!!float 1", "!!str 12", "!!null x", "!!timestamp nope", "!custom x", "<<", "'y'",
    '"1e99999999"', "1e99999999", "99999999999999999999", "-9223372036854775809", "1e400",
    "0b101", "[y, n]", "{y: 1}", "&a [1]", "*nope",
]  # fmt: skip

HOSTILE_VALUES: list[Any] = [
    None, True, False, 0, -1, 2**31, 2**63, -(2**63) - 1, 2**64, 1.5, 1e300, "", "x" * 70,
    "1e99999999", "-1", "Ki", "+", "x" * 5000, "é" * 100, [], {}, [None], {"": None},
    [[[[[]]]]], {"a": {"b": {"c": {}}}}, "{zone.__class__}", "{i:>99}", "../../etc/passwd",
    "/dev/zero", "\u0000", "\x7f", "1" * 5000,
]  # fmt: skip


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    stack = [(value, prefix)]
    while stack:
        item, path = stack.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                found.append((*path, key))
                stack.append((child, (*path, key)))
        elif isinstance(item, list):
            for index, child in enumerate(item):
                found.append((*path, index))
                stack.append((child, (*path, index)))
    return found


def _set(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    parent = value
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = new
    return value


def _dump(documents: list[Any], rng: random.Random) -> bytes:
    if rng.random() < 0.3:
        if len(documents) == 1:
            return json.dumps(documents[0], indent=rng.choice([None, 4])).encode()
        return json.dumps({"apiVersion": "v1", "kind": "List", "items": documents}).encode()
    return yaml.safe_dump_all(documents, sort_keys=False).encode()


def _type_confusion(documents: list[Any], rng: random.Random) -> bytes:
    documents = json.loads(json.dumps(documents))
    for _ in range(rng.randint(1, 3)):
        index = rng.randrange(len(documents))
        paths = _paths(documents[index])
        path = rng.choice(paths)
        documents[index] = _set(
            documents[index], path, json.loads(json.dumps(rng.choice(HOSTILE_VALUES)))
        )
    return _dump(documents, rng)


def _spelling(text: bytes, rng: random.Random) -> bytes:
    lines = text.decode().splitlines()
    candidates = [
        i for i, line in enumerate(lines) if ": " in line and not line.rstrip().endswith(":")
    ]
    for _ in range(rng.randint(1, 3)):
        if not candidates:
            break
        i = rng.choice(candidates)
        key, _, _ = lines[i].partition(": ")
        lines[i] = f"{key}: {rng.choice(SPELLINGS)}"
    if rng.random() < 0.3:
        keyed = [i for i, line in enumerate(lines) if ": " in line]
        if keyed:
            i = rng.choice(keyed)
            indent = len(lines[i]) - len(lines[i].lstrip())
            lines.insert(i + 1, " " * indent + rng.choice(["y", "1", "1.5", "on", "~"]) + ": x")
    return ("\n".join(lines) + "\n").encode()


def _truncate(text: bytes, rng: random.Random) -> bytes:
    return text[: rng.randrange(len(text) + 1)]


def _mutate_bytes(text: bytes, rng: random.Random) -> bytes:
    data = bytearray(text)
    for _ in range(rng.randint(1, 8)):
        if not data:
            break
        position = rng.randrange(len(data))
        choice = rng.random()
        if choice < 0.4:
            data[position] = rng.randrange(256)
        elif choice < 0.7:
            del data[position]
        else:
            data.insert(position, rng.choice(b"{}[]:-&*!|>'\"#%@`\t\n \x00\xff"))
    return bytes(data)


def _bomb(rng: random.Random) -> bytes:
    choice = rng.randrange(7)
    if choice == 0:
        lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
        lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
        return ("\n".join(lines) + "\n").encode()
    depth = rng.choice([500, 1100, 10_000, 100_000])
    if choice == 1:
        return b"[" * depth + b"]" * depth
    if choice == 2:
        return b"{" * depth
    if choice == 3:
        return "".join(f"{' ' * i}a:\n" for i in range(min(depth, 3000))).encode()
    if choice == 4:
        return b"- " * depth + b"x\n"
    if choice == 5:
        return (
            b"apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {a: "
            + b"9" * 100_000
            + b"}}\n"
        )
    return b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + b"x" * (4 * 1024 * 1024) + b"\n"


def _documents(path: Path) -> list[Any]:
    return [d for d in parse_documents(path.read_bytes(), str(path)) if d is not None]


def _seeds() -> list[tuple[str, dict[str, Path]]]:
    explain = [
        ("explain", {"cluster.yaml": folder / "cluster.yaml", "pod.yaml": folder / "pod.yaml"})
        for folder in sorted(EXAMPLES.iterdir())
        if (folder / "cluster.yaml").exists() and (folder / "pod.yaml").exists()
    ]
    simulate = [
        ("simulate", {"scenario.yaml": scenario})
        for scenario in sorted((EXAMPLES / "scenarios").glob("*.yaml"))
    ]
    return [*explain, *simulate]


def draw_case(number: int, rng: random.Random) -> Case:
    """One broken case; the same (number, seed of rng) gives the same case."""
    command, seed_files = rng.choice(_seeds())
    files: dict[str, bytes] = {}
    roles: dict[str, str] = {}
    if command == "explain":
        files["cluster.yaml"] = seed_files["cluster.yaml"].read_bytes()
        files["pod.yaml"] = seed_files["pod.yaml"].read_bytes()
        roles = {"cluster.yaml": "cluster", "pod.yaml": "pod"}
        if rng.random() < 0.3:
            files["config.yaml"] = CONFIG.read_bytes()
            roles["config.yaml"] = "config"
    else:
        source = seed_files["scenario.yaml"]
        text = source.read_bytes()
        # Bundled scenarios refer to sibling example folders; inline those files here.
        document = _documents(source)[0]
        cluster = document.get("cluster") or {}
        referenced = cluster.get("files") or []
        for i, name in enumerate(referenced):
            local = f"ref{i}.yaml"
            files[local] = (source.parent / name).read_bytes()
            roles[local] = "cluster"
            referenced[i] = local
        text = yaml.safe_dump(document, sort_keys=False).encode()
        files = {"scenario.yaml": text, **files}
        roles = {"scenario.yaml": "scenario", **roles}
    target = rng.choice(list(files))
    kind = rng.choice(
        ["type-confusion"] * 5 + ["spelling"] * 3 + ["truncate", "bytes", "bytes", "bomb",
         "duplicate", "special"]
    )  # fmt: skip
    case = Case(number, kind, command, files, {}, roles)
    original = files[target]
    if kind == "type-confusion":
        files[target] = _type_confusion(_documents_of(original), rng)
    elif kind == "spelling":
        files[target] = _spelling(
            yaml.safe_dump_all(_documents_of(original), sort_keys=False).encode(), rng
        )
    elif kind == "truncate":
        files[target] = _truncate(original, rng)
    elif kind == "bytes":
        files[target] = _mutate_bytes(original, rng)
    elif kind == "bomb":
        files[target] = _bomb(rng)
    elif kind == "duplicate":
        files[target] = original + b"\n---\n" + original
    else:
        case.special[target] = rng.choice(["fifo", "dev-zero", "folder", "missing"])
    return case


def _documents_of(text: bytes) -> list[Any]:
    return [d for d in parse_documents(text, "seed") if d is not None]


def command_line(case: Case, folder: Path) -> list[str]:
    def path(role: str) -> str:
        return next(str(folder / n) for n, r in case.roles.items() if r == role)

    if case.command == "explain":
        args = ["explain", "--cluster", path("cluster"), "--pod", path("pod"), "-o", "json"]
        if "config" in case.roles.values():
            args += ["--config", path("config")]
        return args
    return ["simulate", path("scenario"), "-o", "json"]


def write_case(case: Case, folder: Path) -> None:
    for name, content in case.files.items():
        special = case.special.get(name)
        target = folder / name
        if special == "fifo":
            os.mkfifo(target)
        elif special == "dev-zero":
            target.symlink_to("/dev/zero")
        elif special == "folder":
            target.mkdir()
        elif special != "missing":
            target.write_bytes(content)


# -- running -------------------------------------------------------------------------------------


def run_case(case: Case, folder: Path) -> Outcome:
    """Run the case's command line in a forked child (2 GiB, 20 s) and collect the result."""
    write_case(case, folder)
    args = command_line(case, folder)
    out_path, err_path = folder / ".stdout", folder / ".stderr"
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
            out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            err = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(out, 1)
            os.dup2(err, 2)
            sys.stdin = open(0, closefd=False)  # noqa: SIM115
            sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
            sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
            from topospread.cli.commands import cli

            code = 0
            try:
                cli.main(args, prog_name="topospread", standalone_mode=True)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except BaseException:
                import traceback

                traceback.print_exc()
                code = 70
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        finally:
            os._exit(71)
    code: int | None = None
    sig: int | None = None
    usage = None
    deadline = started + TIME_LIMIT + 5
    while True:
        waited, status, usage = os.wait4(pid, os.WNOHANG)
        if waited == pid:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            waited, status, usage = os.wait4(pid, 0)
            break
        time.sleep(0.002)
    seconds = time.monotonic() - started
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
    else:
        code = os.WEXITSTATUS(status)
    read = lambda p: p.read_text(encoding="utf-8", errors="replace") if p.exists() else ""  # noqa: E731
    return Outcome(case, code, read(out_path), read(err_path), seconds, usage.ru_maxrss * 1024, sig)


def run_many(count: int, seed: int, start: int = 0) -> list[tuple[Outcome, list[str]]]:
    """Draw and run cases ``start`` to ``start + count``; each outcome with its problems.

    Each case has its own random stream (from ``seed`` and its number), so a long run can
    be split into shards and any case redrawn alone.
    """
    # Imported once here, so that every forked child starts with the command line loaded.
    import topospread.cli.commands  # noqa: F401

    results = []
    for number in range(start, start + count):
        case = draw_case(number, random.Random(seed * 1_000_003 + number))
        with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp:
            folder = Path(tmp)
            outcome = run_case(case, folder)
            results.append((outcome, outcome.problems(folder)))
    return results
