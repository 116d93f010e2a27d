"""Helpers of the hostile- and careless-input tests and of the tests that run commands as processes, imported as
``safety_helpers`` (tests/conftest.py puts this folder on the path): ``guard`` hashes every file under the folders a case names before the command runs;
``Guard.unchanged()`` asserts that each still exists with the same bytes and that no partial files (``*.tmp``,
``*.partial``) were left behind; ``run_cli`` runs a command in a child process; ``assert_clean_error`` checks its
one-line message; ``descendant_named`` finds a process a command started; ``import_ray_or_skip`` is the Ray
tests' module-level check."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def tree_hashes(*roots: Path) -> dict[str, str]:
    """``{path: sha256}`` of every regular file under ``roots`` (files or folders), links not followed."""
    hashes = {}
    for root in roots:
        root = Path(root)
        if root.is_file() and not root.is_symlink():
            hashes[str(root)] = hashlib.sha256(root.read_bytes()).hexdigest()
            continue
        if not root.is_dir():
            continue
        for dirpath, _, filenames in os.walk(root):
            for name in filenames:
                path = Path(dirpath) / name
                if path.is_file() and not path.is_symlink():
                    hashes[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return hashes


class Guard:
    """Hashes of the files a case must not lose, taken when the guard is armed."""

    def __init__(self):
        self.roots: list[Path] = []
        self.before: dict[str, str] = {}

    def arm(self, *roots) -> "Guard":
        self.roots = [Path(r) for r in roots]
        self.before = tree_hashes(*self.roots)
        assert self.before, "guard armed on nothing: name at least one existing file"
        return self

    def unchanged(self, allow_new: bool = True, partials=()) -> None:
        """Every hashed file is still there with its bytes; no ``*.tmp`` or ``*.partial`` left behind.

        ``partials``: partial folders a case made itself (another build's work in progress), which must
        survive unchanged rather than be absent.
        """
        after = tree_hashes(*self.roots)
        lost = sorted(p for p in self.before if p not in after)
        changed = sorted(p for p in self.before if p in after and after[p] != self.before[p])
        assert not lost, f"files lost: {lost}"
        assert not changed, f"files changed: {changed}"
        kept = tuple(f"{Path(p)}/" for p in partials)
        leftovers = sorted(p for p in after if (p.endswith((".tmp", ".partial")) or ".partial/" in p)
                           and not p.startswith(kept))
        assert not leftovers, f"partial files left behind: {leftovers}"
        if not allow_new:
            assert sorted(after) == sorted(self.before), f"new files: {sorted(set(after) - set(self.before))}"



def run_cli(*args, cwd=None, env=None, timeout=120, input=None) -> subprocess.CompletedProcess:
    """``negplugins ARGS`` in a child process (so exit codes, signals and stderr are real)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_ROOT), full_env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "negplugins", *map(str, args)], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout, input=input)


def assert_clean_error(result: subprocess.CompletedProcess, *fragments: str, codes=(1, 2)) -> None:
    """A user error: exit status in ``codes``, one line on stderr naming ``fragments``, no traceback."""
    assert result.returncode in codes, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines, "no error message on stderr"
    message = lines[-1]
    for fragment in fragments:
        assert fragment in result.stderr, f"{fragment!r} not in {result.stderr!r}"
    assert message.startswith("negplugins: "), message


def descendant_named(pid: int, name: str) -> int | None:
    """The pid of a process named ``name`` below ``pid`` (read from ``ps``), else ``None``."""
    rows = [line.split(None, 2) for line in subprocess.run(["ps", "-e", "-o", "pid=,ppid=,comm="], capture_output=True,
                                                           text=True).stdout.splitlines()]
    todo, seen = [pid], set()
    while todo:
        parent = todo.pop()
        for row in rows:
            if len(row) == 3 and int(row[1]) == parent and int(row[0]) not in seen:
                seen.add(int(row[0]))
                if name in row[2]:
                    return int(row[0])
                todo.append(int(row[0]))
    return None


def import_ray_or_skip():
    """``ray``, for a Ray test module's top level: the module is skipped without it, and fails under ``CI=true``."""
    import pytest

    try:
        import ray
    except ImportError:
        if os.environ.get("CI", "").strip().lower() == "true":
            pytest.fail("Ray is not installed (pip install -e '.[ray]'); CI=true, where it must be", pytrace=False)
        pytest.skip("Ray is not installed (pip install -e '.[ray]')", allow_module_level=True)
    return ray
