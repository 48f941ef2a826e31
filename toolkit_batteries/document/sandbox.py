"""The bubblewrap sandbox of the ``latex`` adapter: what the compiler may see, and whether
it can start here.

The sandbox is the guard the pre-scan is not: TeX is a programming language, so no textual
scan can promise that a source never reaches a file primitive. Inside the sandbox the
compiler sees only

* the TeX tree kpathsea reports (``kpsewhich --expand-path '$TEXMF'``, ``TEXMFCNF``,
  ``TEXMFROOT``): public packages, fonts and formats, never a per-user tree;
* the system's executables and shared libraries: the compiler's own directory (``/usr/bin``:
  kpathsea runs ``mktexpk``, ``mf`` and the shell tools they call to make a missing
  font) and the directories of the libraries it links (``ldd``: ``/usr/lib/<arch>``);
* the system font configuration (``/etc/fonts``, ``/usr/share/fonts``) that ``xelatex``
  and ``lualatex`` read;
* the render's own directory, as ``/work`` (the only writable place besides a private
  ``/tmp``).

So an application deployed under ``/usr/src/app``, ``/srv`` or a home directory is not in
the compiler's view, whatever the source does. There is no network (every namespace is
unshared) and the environment is cleared.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

__all__ = ["sandbox_args", "sandbox_problem", "tex_tree"]

#: Directories that are never bound whole even if kpathsea names one as a tree root: they
#: hold far more than TeX (a TeX Live rooted at ``/usr`` reports ``SELFAUTOPARENT=/``).
_TOO_BROAD = frozenset(
    {"/", "/usr", "/usr/local", "/usr/share", "/usr/lib", "/etc", "/var", "/var/lib", "/opt"}
    | {"/home", "/root", "/srv", "/tmp", "/usr/src", "/usr/local/share"}
)
#: System font configuration (public data) that fontconfig-based engines read.
FONT_PATHS = ("/etc/fonts", "/usr/share/fonts", "/var/cache/fontconfig", "/etc/ld.so.cache")
_probe_lock = threading.Lock()
_probed: dict[str, str] = {}


def _kpse(program: str, *args: str) -> str:
    kpsewhich = shutil.which("kpsewhich", path=os.path.dirname(program)) or shutil.which(
        "kpsewhich"
    )
    if kpsewhich is None:
        return ""
    done = subprocess.run(
        [kpsewhich, *args],
        capture_output=True,
        text=True,
        timeout=10,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    return done.stdout.strip() if done.returncode == 0 else ""


@functools.lru_cache(maxsize=8)
def tex_tree(program: str) -> tuple[str, ...]:
    """Return the TeX installation's directories for ``program`` (existing, deduplicated).

    Per-user trees (``TEXMFHOME``, ``TEXMFVAR``, ``TEXMFCONFIG``) are left out: they sit in
    a home directory, which may be the application's.
    """
    personal = {
        os.path.realpath(_kpse(program, f"-var-value={name}"))
        for name in ("TEXMFHOME", "TEXMFVAR", "TEXMFCONFIG")
    } - {os.path.realpath("")}
    found: list[str] = []
    paths = _kpse(program, "--expand-path", "$TEXMF").split(":")
    paths += _kpse(program, "-var-value=TEXMFCNF").split(":")
    paths += [_kpse(program, "-var-value=TEXMFROOT")]
    for raw in paths:
        raw = raw.strip().lstrip("!")
        if not raw or not os.path.isdir(raw):
            continue
        real = os.path.realpath(raw)
        if (
            real in _TOO_BROAD
            or real in personal
            or any(real == p or real.startswith(p + "/") for p in personal)
        ):
            continue
        if real not in found:
            found.append(real)
    # Keep only the outermost directories (a bind of /etc/texmf covers /etc/texmf/web2c).
    outer = [p for p in found if not any(p != q and p.startswith(q + "/") for q in found)]
    return tuple(sorted(outer))


@functools.lru_cache(maxsize=8)
def _program_dirs(program: str) -> tuple[str, ...]:
    """Return the directories of ``program`` and of the shared libraries it links."""
    files = [program]
    ldd = shutil.which("ldd")
    if ldd is not None:
        done = subprocess.run(
            [ldd, program],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        for line in done.stdout.splitlines():
            for word in line.split():
                if word.startswith("/") and os.path.exists(word):
                    files.append(word)
    found: list[str] = []
    for path in files:
        for directory in {os.path.dirname(path), os.path.dirname(os.path.realpath(path))}:
            real = os.path.realpath(directory)
            if real not in _TOO_BROAD and real not in found:
                found.append(real)
    return tuple(sorted(found))


def sandbox_args(work: Path, program: str) -> list[str]:
    """Return the bwrap arguments that run ``program`` with ``work`` as ``/work``."""
    args = ["--unshare-all", "--die-with-parent", "--new-session"]
    for path in _program_dirs(program):
        args += ["--ro-bind", path, path]
    for path in tex_tree(program):
        args += ["--ro-bind", path, path]
    for path in FONT_PATHS:
        args += ["--ro-bind-try", path, path]
    for link in ("bin", "lib", "lib64", "sbin"):
        if os.path.islink(f"/{link}"):
            args += ["--symlink", os.readlink(f"/{link}"), f"/{link}"]
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    args += ["--bind", str(work), "/work", "--chdir", "/work", "--clearenv"]
    return args


def sandbox_problem(bwrap: str = "bwrap", program: str = "") -> str:
    """Return why bubblewrap cannot sandbox ``program`` here, or ``""`` (cached).

    The probe runs ``program -version`` (``true`` when no program is named) inside the
    very sandbox a render gets, so a sandbox that starts but cannot run the compiler is
    reported too.
    """
    key = f"{bwrap}\0{program}"
    with _probe_lock:
        if key in _probed:
            return _probed[key]
        if _probed.get(bwrap):
            return _probed[bwrap]
        path = shutil.which(bwrap)
        if path is None:
            problem = "bubblewrap (bwrap) is not installed"
        else:
            target = program or shutil.which("true") or "/usr/bin/true"
            argv = [target, "-version"] if program else [target]
            with tempfile.TemporaryDirectory(prefix="toolkit-document-probe-") as work:
                try:
                    done = subprocess.run(
                        [path, *sandbox_args(Path(work), target), *argv],
                        stdin=subprocess.DEVNULL,
                        capture_output=True,
                        timeout=20,
                        check=False,
                    )
                    problem = (
                        ""
                        if done.returncode == 0
                        else "bwrap cannot create a sandbox here (user namespaces unavailable?)"
                    )
                except (OSError, subprocess.TimeoutExpired):
                    problem = "bwrap cannot create a sandbox here"
        _probed[key] = problem
        return problem
