"""Worker processes for CPU-bound extraction, started as ``python -m stratagraph.ingest.extractors.workers``.

Why not ``multiprocessing``: ``fork`` would copy a process that holds onnxruntime and Chroma threads (a lock
held by one of them at fork time stays held forever in the child), and ``spawn`` / ``forkserver`` import the
caller's ``__main__`` in every child, which re-runs any script that calls ``StrataGraph.ingest`` without an
``if __name__ == "__main__"`` guard. A plain subprocess running this module imports nothing of the caller.

Protocol on the child's stdin / stdout: frames of an 8-byte big-endian length and a pickle. The parent sends
``(function path, args)``; the child answers ``("ok", result)`` or ``("error", message)``. EOF on stdin ends
the child. Pickles only travel between this process and children it started itself.
"""

from __future__ import annotations

import importlib
import os
import pickle
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any, BinaryIO

_HEADER = struct.Struct(">Q")


def _write(stream: BinaryIO, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)))
    stream.write(data)
    stream.flush()


def _read(stream: BinaryIO) -> Any:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError("worker stream closed")
    (size,) = _HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("worker stream closed mid-frame")
    return pickle.loads(data)  # noqa: S301 - frames come only from our own child process


def _resolve(path: str) -> Callable[..., Any]:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


class WorkerPool:
    """``n`` long-lived worker processes; :meth:`map` runs ``function(*args)`` for each args tuple, spread
    over the workers, results in input order. ``function`` is given as ``"package.module:name"``."""

    def __init__(self, n: int) -> None:
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        self._procs = [
            subprocess.Popen(
                [sys.executable, "-m", __name__],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=env,
            )
            for _ in range(n)
        ]
        self._warming: list[threading.Thread] = []
        self._warm_errors: list[str] = []

    def warm(self, function: str) -> None:
        """Run ``function()`` once in every worker without waiting (loading a model while the caller does
        other work); the next :meth:`map` waits for it first and fails with its error, if any."""

        def drive(proc: subprocess.Popen[bytes]) -> None:
            assert proc.stdin is not None and proc.stdout is not None
            try:
                _write(proc.stdin, (function, ()))
                status, value = _read(proc.stdout)
            except (OSError, EOFError) as exc:
                self._warm_errors.append(f"extraction worker {proc.pid} died ({exc}; exit code {proc.poll()})")
                return
            if status != "ok":
                self._warm_errors.append(str(value))

        self._wait_warm()
        self._warming = [threading.Thread(target=drive, args=(p,), daemon=True) for p in self._procs]
        for t in self._warming:
            t.start()

    def _wait_warm(self) -> None:
        for t in self._warming:
            t.join()
        self._warming = []
        if self._warm_errors:
            errors, self._warm_errors = self._warm_errors, []
            raise RuntimeError(errors[0])

    @property
    def size(self) -> int:
        return len(self._procs)

    def map(self, function: str, jobs: Sequence[tuple[Any, ...]]) -> list[Any]:
        self._wait_warm()
        results: list[Any] = [None] * len(jobs)
        errors: list[str] = []
        next_job = iter(range(len(jobs)))
        lock = threading.Lock()

        def drive(proc: subprocess.Popen[bytes]) -> None:
            assert proc.stdin is not None and proc.stdout is not None
            while True:
                with lock:
                    if errors:
                        return
                    i = next(next_job, None)
                if i is None:
                    return
                try:
                    _write(proc.stdin, (function, jobs[i]))
                    status, value = _read(proc.stdout)
                except (OSError, EOFError) as exc:
                    with lock:
                        errors.append(f"extraction worker {proc.pid} died ({exc}; exit code {proc.poll()})")
                    return
                if status != "ok":
                    with lock:
                        errors.append(str(value))
                    return
                results[i] = value

        threads = [threading.Thread(target=drive, args=(p,), daemon=True) for p in self._procs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise RuntimeError(errors[0])
        return results

    def close(self) -> None:
        for proc in self._procs:  # (a warm-up still running ends with the worker: its reader sees EOF)
            if proc.stdin is not None:
                try:
                    proc.stdin.close()
                except OSError:
                    pass
        for proc in self._procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        for t in self._warming:
            t.join(timeout=10)
        self._warming, self._warm_errors = [], []
        self._procs = []


def serve(stdin: BinaryIO, stdout: BinaryIO) -> None:
    """The child's loop: answer frames until stdin closes."""
    while True:
        try:
            function, args = _read(stdin)
        except EOFError:
            return
        try:
            _write(stdout, ("ok", _resolve(function)(*args)))
        except Exception as exc:  # the parent reports it; the worker stays up for the next job
            _write(stdout, ("error", f"{type(exc).__name__}: {exc}"))


if __name__ == "__main__":
    out = sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing printed by library code may corrupt the frame stream
    serve(sys.stdin.buffer, out)
