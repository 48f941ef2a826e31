"""The ``local`` adapter (default): HTML to PDF with WeasyPrint, in renderer processes.

WeasyPrint runs in-process and cannot be interrupted, so this adapter keeps a small pool
of renderer processes (:mod:`.weasyworker`, started with this interpreter and
``sys.path``) that import WeasyPrint once and then render one document at a time. A
render that passes ``timeout`` kills its process (the next render starts a fresh one);
a process is also replaced after :data:`MAX_RENDERS_PER_PROCESS` renders, to bound
memory growth. Starting a process (about half a second, once) is not counted against a
render's ``timeout``; the render itself is. Opening starts one process in the
background, so the first render rarely waits.

WeasyPrint fetches nothing from the network: its URL fetcher serves ``data:`` URLs and
the render's ``assets`` only (relative URLs resolve against them); any other URL, http,
https or a file outside the assets, is refused without I/O, and the count of refused
URLs is logged as a warning on ``toolkit.document``.

Page images come from the PDF through ``pdftoppm`` (:mod:`..raster`).
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import pickle
import select
import struct
import subprocess
import sys
import threading
import time
from typing import Any

from toolkit_batteries.core.adapter import OpenContext
from toolkit_batteries.core.errors import MissingExtraError, ServiceUnavailableError
from toolkit_batteries.core.tracing import traced

from ..base import (
    Document,
    DocumentTooLargeError,
    RenderFailedError,
)

__all__ = ["MAX_RENDERS_PER_PROCESS", "LocalDocument"]

logger = logging.getLogger("toolkit.document")

#: The renderer process's module (run with ``python -m``).
WORKER_MODULE = "toolkit_batteries.document.adapters.weasyworker"
#: Renders one process serves before it is replaced.
MAX_RENDERS_PER_PROCESS = 500
#: Seconds a new renderer process may take to import WeasyPrint.
STARTUP_TIMEOUT = 60.0
_HEADER = struct.Struct(">I")


class _WorkerGone(Exception):
    """The renderer process exited or broke the protocol."""


class _Worker:
    """One renderer process and its pipes (non-blocking, read and written with a deadline)."""

    def __init__(self, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", WORKER_MODULE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self._in = self.process.stdin.fileno()
        self._out = self.process.stdout.fileno()
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)
        self._buffer = bytearray()
        self.ready = False
        self.renders = 0

    def wait_ready(self, deadline: float) -> None:
        if self.ready:
            return
        answer = self.receive(deadline)
        if not answer.get("ready"):
            raise _WorkerGone(str(answer.get("message") or "the renderer did not start"))
        self.ready = True

    def send(self, message: dict[str, Any], deadline: float) -> None:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        view = memoryview(_HEADER.pack(len(data)) + data)
        while view:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            _, writable, _ = select.select([], [self._in], [], left)
            if not writable:
                continue
            try:
                written = os.write(self._in, view[:65536])
            except BlockingIOError:
                continue
            except (BrokenPipeError, OSError):
                raise _WorkerGone("the renderer process exited") from None
            view = view[written:]

    def receive(self, deadline: float) -> dict[str, Any]:
        while True:
            if len(self._buffer) >= _HEADER.size:
                (length,) = _HEADER.unpack_from(self._buffer)
                if len(self._buffer) >= _HEADER.size + length:
                    data = bytes(self._buffer[_HEADER.size : _HEADER.size + length])
                    del self._buffer[: _HEADER.size + length]
                    return pickle.loads(data)
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            readable, _, _ = select.select([self._out], [], [], left)
            if not readable:
                continue
            try:
                chunk = os.read(self._out, 1 << 20)
            except BlockingIOError:
                continue
            if not chunk:
                raise _WorkerGone("the renderer process exited")
            self._buffer += chunk

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, 9)
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        for stream in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError):
                stream.close()  # type: ignore[union-attr]
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)


class _Pool:
    """At most ``size`` renderer processes; a render borrows an idle one or starts one."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._env = dict(os.environ)
        self._env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        self._idle: list[_Worker] = []
        self._count = 0
        self._closed = False
        self._cond = threading.Condition()

    def start_one(self) -> None:
        """Start a process in the background if none exists yet."""
        with self._cond:
            if self._closed or self._count:
                return
            self._count += 1
        try:
            worker = _Worker(self._env)
        except BaseException:
            with self._cond:
                self._count -= 1
            raise
        self.release(worker, healthy=True)

    def acquire(self, deadline: float) -> _Worker | None:
        """Return an idle or new process; ``None`` when none frees up before ``deadline``."""
        with self._cond:
            while True:
                if self._closed:
                    raise _WorkerGone("the document service is closed")
                if self._idle:
                    return self._idle.pop()
                if self._count < self.size:
                    self._count += 1
                    break
                left = deadline - time.monotonic()
                timed_out = left <= 0 or not self._cond.wait(left)
                if timed_out and not self._idle and self._count >= self.size:
                    return None
        try:
            return _Worker(self._env)
        except BaseException:
            with self._cond:
                self._count -= 1
                self._cond.notify()
            raise

    def release(self, worker: _Worker, *, healthy: bool) -> None:
        keep = healthy and worker.alive() and worker.renders < MAX_RENDERS_PER_PROCESS
        with self._cond:
            if keep and not self._closed:
                self._idle.append(worker)
            else:
                self._count -= 1
            self._cond.notify()
        if not keep or self._closed:
            worker.kill()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            self._count -= len(idle)
            self._cond.notify_all()
        for worker in idle:
            worker.kill()


@traced("render")
class LocalDocument(Document):
    """HTML (or a Django template) to PDF with WeasyPrint; page images with pdftoppm."""

    adapter_name = "local"

    def __init__(self, options: Any, *, instance: str = "default", processes: int = 0) -> None:
        """Check WeasyPrint is installed and start one renderer process in the background."""
        super().__init__(options, instance=instance)
        if importlib.util.find_spec("weasyprint") is None:
            raise MissingExtraError("document", "local", "document", "weasyprint")
        self._pool = _Pool(processes or min(4, os.cpu_count() or 1))
        self._pool.start_one()

    @classmethod
    def open(cls, ctx: OpenContext) -> LocalDocument:
        return cls(ctx.options, instance=ctx.instance)

    def _render_pdf(
        self, source: str, assets: dict[str, bytes], deadline: float
    ) -> tuple[bytes, int | None]:
        budget = self._left(deadline, "rendering")
        worker = self._pool.acquire(deadline)
        if worker is None:
            raise self._timed_out("waiting for a free renderer")
        healthy = False
        try:
            try:
                worker.wait_ready(time.monotonic() + STARTUP_TIMEOUT)
                # Starting the process is not part of the render's budget.
                deadline = max(deadline, time.monotonic() + budget)
                request = {
                    "html": source,
                    "assets": assets,
                    "max_bytes": self.max_output_bytes,
                    "tmp_dir": self.tmp_dir,
                }
                worker.send(request, deadline)
                answer = worker.receive(deadline)
            except TimeoutError:
                raise self._timed_out("rendering") from None
            except _WorkerGone as exc:
                raise ServiceUnavailableError(
                    "document", f"the renderer failed ({exc})", instance=self.instance
                ) from None
            healthy = True
            worker.renders += 1
        finally:
            self._pool.release(worker, healthy=healthy)
        if not answer.get("ok"):
            if answer.get("kind") == "too_large":
                raise DocumentTooLargeError(self.instance, "the PDF passed max_output_bytes")
            raise RenderFailedError(
                self.instance, "WeasyPrint failed", str(answer.get("message") or "")
            )
        refused = int(answer.get("refused") or 0)
        if refused:
            logger.warning(
                "document.%s: refused %d resource URL(s); only data: URLs and assets load",
                self.instance,
                refused,
            )
        return answer["pdf"], int(answer["pages"])

    def ping(self) -> None:
        """Start a renderer process if none runs (WeasyPrint's import is checked then)."""
        self._pool.start_one()

    def close(self) -> None:
        """Stop every renderer process."""
        self._pool.close()
