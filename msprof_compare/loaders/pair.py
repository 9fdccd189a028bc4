"""Load the two inputs of a comparison side by side when they are large.

Loading (read, decode, model build) is most of a big comparison and the two
sides are independent, so above ``PARALLEL_MIN_BYTES`` of input the base side
is loaded in a forked child process while this process loads the comparison
side; the child sends its ``Profile`` back pickled (~0.3 s per 100 MB of trace,
against ~1.3 s to load it). Small inputs, busy machines (fewer than two idle
CPUs), too little available memory for both loaded sides, macOS (not fork-safe),
platforms without ``fork`` and ``MSPROF_COMPARE_PARALLEL=0`` load in turn, as
does a child that dies (then the base is loaded here). Errors keep the order of
a sequential run: the base side's error wins over the comparison side's. One
input given for both sides (the same path and step) is loaded once.
"""

from __future__ import annotations

import copy
import logging
import multiprocessing as mp
import os
import signal
import stat
import sys
import threading
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import OutOfMemory, ProfileError, StepError, UsageError, on_side
from ..model import Profile
from .paths import GZIP_MAX_RATIO, given_path, gzip_trailer_size

if TYPE_CHECKING:  # pragma: no cover
    from ..options import Options

#: Combined input size from which the two sides load in parallel.
PARALLEL_MIN_BYTES = 64 * 1024**2
#: Memory a parallel load needs per byte of input (both sides held loaded at once, ~4-5x each, plus
#: the pickle sent back): "auto" loads in turn when the machine has less available.
PARALLEL_MEMORY_FACTOR = 6
_CGROUP_ROOT = "/sys/fs/cgroup"
#: (mount under _CGROUP_ROOT, limit file, usage file) of cgroup v2 and of v1's memory controller.
_CGROUP_KINDS = (("", "memory.max", "memory.current"),
                 ("memory", "memory.limit_in_bytes", "memory.usage_in_bytes"))


def input_bytes(path: str, layout: Any = None, opts: Options | None = None) -> int:
    """Bytes of the data files loading reads for an input, gzip files at their decompressed size (what
    loading holds; the samples compress 15x); 0 when unknown (a path detection refuses, a file that cannot
    be sized): detection reports that. A folder counts the files its detected layout leads to, not all it
    holds: a raw ``*_ascend_pt`` also keeps CANN's own timeline and summaries, often as large again.
    ``layout``: the folder's ``Layout`` when the caller has detected it already; ``opts``: the run's
    ``Options``, when known, count only the side files its comparisons read (``ascend_text.side_files_read``),
    the others are not even looked at (they are checked only when read: a link or a FIFO a run does not read
    must change nothing)."""
    from . import detect
    from .ascend_text import SIDE_FILES, side_files_read

    try:
        p = given_path(path)
        if os.path.isfile(p):
            return _data_bytes(p)
        if not os.path.isdir(p):
            return 0
        layout = layout or detect(path, force=True)
        if layout.db_path:
            return os.path.getsize(layout.db_path)
        size = _data_bytes(layout.trace_path)
        if layout.level != "file":  # an Ascend text export: its CSV / JSON side files
            out = layout.ascend_output or os.path.dirname(layout.trace_path)
            names = SIDE_FILES if opts is None else side_files_read(opts)
            size += sum(_data_bytes(f) for f in (os.path.join(out, n) for n in names) if os.path.lexists(f))
        return size
    except (OSError, ValueError, ProfileError):  # ValueError: a NUL in the path (an API caller's string)
        return 0


def _data_bytes(path: str) -> int:
    """A file's size; for gzip (recognised by its magic bytes, as the loader does, in files that may be a
    trace: ``.json`` or ``.gz``; CSVs and DBs are not opened) an estimate of the decompressed size from
    the trailer: ISIZE is modulo 2**32 and covers only the last member of a concatenated gzip, and a
    truncated file ends in random bytes, so it is clamped to between the compressed size and deflate's
    largest expansion of it. 0 for what is no regular file (a FIFO, a device, a folder: the loader refuses or
    passes over it), which is never opened (an open of a FIFO waits for a writer); a link whose target is gone
    raises (OSError: the input's size is unknown)."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        return 0
    size = st.st_size
    if not path.lower().endswith((".gz", ".json")):
        return size
    stated = gzip_trailer_size(path, size)
    return size if stated is None else min(max(size, stated), GZIP_MAX_RATIO * size)


def idle_cpus() -> float:
    """CPUs this process may use minus the 1-minute load average (what another process would get)."""
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count() or 1
    try:
        return usable - os.getloadavg()[0]
    except OSError:
        return float(usable) - 1


def available_memory() -> int | None:
    """Bytes of memory available to a new process, None when unknown: Linux ``MemAvailable``, or less
    when this process's memory cgroup (a container's limit) leaves less."""
    avail = None
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass
    left = _cgroup_left()
    if left is not None:
        avail = left if avail is None else min(avail, left)
    return avail


def _cgroup_paths() -> dict[str, str]:
    """This process's cgroup per hierarchy ("" for v2, "memory" for v1's memory controller)."""
    out: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                parts = line.rstrip("\n").split(":", 2)
                if len(parts) == 3:
                    if parts[0] == "0" and parts[1] == "":
                        out[""] = parts[2]
                    elif "memory" in parts[1].split(","):
                        out["memory"] = parts[2]
    except OSError:
        pass
    return out


def _cgroup_left() -> int | None:
    """Bytes this process's memory cgroup still allows: the tightest limit on the way from its own
    cgroup up to the mount's root, minus the usage there (None without any limit). The own cgroup is
    looked up in /proc/self/cgroup (Slurm, systemd units); a container that mounts its own cgroup as
    the root finds its limit at the root."""
    paths = _cgroup_paths()
    best: int | None = None
    for mount, limit_name, usage_name in _CGROUP_KINDS:
        own = paths.get(mount, "/").strip("/")
        parts = own.split("/") if own else []
        for depth in range(len(parts), -1, -1):
            d = os.path.join(_CGROUP_ROOT, mount, *parts[:depth])
            try:
                with open(os.path.join(d, limit_name), encoding="ascii") as fh:
                    limit = fh.read().strip()
                with open(os.path.join(d, usage_name), encoding="ascii") as fh:
                    usage = int(fh.read().strip())
            except (OSError, ValueError):
                continue
            if limit.isdigit() and int(limit) < 2**60:  # "max" / v1's huge number: no limit here
                left = max(0, int(limit) - usage)
                best = left if best is None else min(best, left)
    return best


def parallel_mode() -> str:
    """``MSPROF_COMPARE_PARALLEL`` as read: "0", "1" or "auto" (unset); any other value is warned about and read as
    "auto". Every run reads it once, a self-compare too (which loads its one input alone): a bad value is said
    whether or not this run would have forked."""
    mode = os.environ.get("MSPROF_COMPARE_PARALLEL", "auto").strip().lower()
    if mode not in ("0", "1", "auto"):
        logging.getLogger("msprof-analyze").warning(
            "Ignoring MSPROF_COMPARE_PARALLEL=%r: expected 0, 1 or auto.", os.environ["MSPROF_COMPARE_PARALLEL"])
        mode = "auto"
    return mode


def parallel_wanted(base: str, comparison: str, size: int | None = None, mode: str | None = None) -> bool:
    """True when loading the two sides in two processes is worth a fork (``mode``: ``parallel_mode()`` as a
    rank-by-rank job read it once; None: read here).

    ``MSPROF_COMPARE_PARALLEL``: "0" never, "1" whenever the inputs are large, "auto" (default)
    when they are large, two CPUs are idle and the memory for both loaded sides at once is
    available. On a 2-vCPU machine already running two other jobs, two loader processes were
    slower than one (docs/performance.md), hence "auto"; a parallel load holds both sides at
    once (4.45 + 4.70 GB at 1 GB per GPU side, about twice a load in turn), hence the memory test.
    """
    mode = parallel_mode() if mode is None else mode
    if mode == "0" or "fork" not in mp.get_all_start_methods():
        return False
    if mode != "1" and sys.platform == "darwin":  # some macOS system libraries are not fork-safe
        return False
    if mp.current_process().daemon:  # a multiprocessing.Pool worker: it may not have children
        return False
    if threading.active_count() > 1:
        # fork() copies only this thread: a lock another thread holds (an import lock, a library's
        # mutex) stays locked in the child forever, and the parent would wait on it (Jupyter, services)
        return False
    total = input_bytes(base) + input_bytes(comparison) if size is None else size
    if total < PARALLEL_MIN_BYTES:
        return False
    if mode == "1":
        return True
    avail = available_memory()
    return idle_cpus() >= 2 and (avail is None or avail >= PARALLEL_MEMORY_FACTOR * total)


class ChildTraceback(Exception):
    """The formatted traceback of a loader child, chained under the error re-raised here (``--debug``
    then shows where the child failed, not just where the parent re-raised)."""


class LoaderError(RuntimeError):
    """An unexpected error of the loader child: reported like the same error in this process
    (the CLI's "internal error" line, whose text is the child's message)."""


def _pack_error(exc: BaseException) -> tuple:
    if isinstance(exc, ProfileError):
        return ("profile", exc.path, exc.message, exc.hint)
    if isinstance(exc, StepError):  # its aside kept apart, for the side the parent puts before it
        return ("step", exc.message, exc.aside, exc.side)
    if isinstance(exc, UsageError):
        return ("usage", str(exc))
    if isinstance(exc, MemoryError):
        return ("memory",)
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return ("other", str(exc) or type(exc).__name__, tb)


def _unpack_error(packed: tuple) -> BaseException:
    if packed[0] == "profile":
        return ProfileError(packed[1], packed[2], hint=packed[3])
    if packed[0] == "step":
        step = StepError(packed[1], packed[2])
        if packed[3] is not None:
            step.side = packed[3]
            step.args = (step.said(),)
        return step
    if packed[0] == "usage":
        return UsageError(packed[1])
    if packed[0] == "memory":
        return MemoryError()
    err = LoaderError(packed[1])
    err.__cause__ = ChildTraceback("\n\nTraceback of the loader process:\n" + packed[2])
    return err


def _die_with_parent(parent: int) -> None:
    """Linux: have the kernel kill this loader when the compare process dies (SIGTERM from a job
    scheduler or ``timeout``, SIGKILL), instead of finishing a multi-GB load for nobody."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # no prctl (not Linux): the closed pipe still ends the child
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def _child(conn: Any, other_end: Any, parent: int, load: Callable[..., Profile], path: str, args: tuple) -> None:
    # The parent's end of the pipe, inherited through fork: left open here, a send to a dead
    # parent would block forever once the pipe buffer is full, instead of failing.
    other_end.close()
    # Ctrl-C reaches the whole process group: the parent reports it and kills this child, which must
    # not print a KeyboardInterrupt traceback of its own (e.g. in the middle of sending its result)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(parent)
    try:
        result: tuple = ("ok", load(path, *args))
    except BaseException as exc:  # noqa: BLE001 - every failure goes back to the parent
        result = ("err", _pack_error(exc))
    try:
        conn.send(result)
    except OSError:  # the parent is gone: nobody is left to tell
        pass
    finally:
        conn.close()


def _naming_memory(load: Callable[..., Profile]) -> Callable[..., Profile]:
    """``load`` whose ``MemoryError`` names the input it was loading (the CLI's out-of-memory line says which)."""
    def named(path: str, *args: Any) -> Profile:
        try:
            return load(path, *args)
        except OutOfMemory:
            raise
        except MemoryError:
            raise OutOfMemory(path, "loading it") from None

    return named


def load_pair(base: str, comparison: str, load: Callable[..., Profile], base_args: tuple, comparison_args: tuple,
              check: Callable[[Profile], None], size: int | None = None,
              base_side: str = "base side", mode: str | None = None) -> tuple[Profile, Profile]:
    """``(load(base, *base_args), load(comparison, *comparison_args))``, each passed to ``check``; an error names
    its side, the base's ``base_side`` ("both sides": one input under two paths, ``run/`` and ``./run``).
    ``mode``: ``MSPROF_COMPARE_PARALLEL`` as a rank-by-rank job read it, once for its ranks (None: read here).

    In parallel when ``parallel_wanted`` (``size``: the inputs' ``input_bytes`` when the caller
    has them); the result and the exceptions raised are those of the sequential order (base
    loaded and checked first).
    """
    load = _naming_memory(load)
    if base == comparison and base_args == comparison_args:
        # one input twice (a self-compare, to check the tool or a setup): decoded once, the comparison side a
        # copy (comparators may replace a side's frames)
        if mode is None:  # nothing to load side by side, but a bad setting is said as in a compare of two inputs
            parallel_mode()
        with on_side("both sides"):
            b = load(base, *base_args)
            check(b)
        return b, copy.deepcopy(b)
    # an error names its side (``errors.on_side``): two inputs of one name (rank 0 against rank 1) gave lines alike
    # but for a digit of a path
    if not parallel_wanted(base, comparison, size, mode):
        with on_side(base_side):
            b = load(base, *base_args)
            check(b)
        with on_side("comparison side"):
            c = load(comparison, *comparison_args)
            check(c)
        return b, c
    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, recv, os.getpid(), load, base, base_args), daemon=True)
    proc.start()
    send.close()
    comp: Profile | None = None
    comp_error: BaseException | None = None
    try:
        comp = load(comparison, *comparison_args)
    except Exception as exc:  # raised after the base side's own errors, as in turn
        comp_error = exc
    except BaseException:
        proc.kill()
        recv.close()
        proc.join()
        raise
    try:
        status, payload = recv.recv()
    except (EOFError, OSError):
        status, payload = "died", None
    except BaseException:  # Ctrl-C while waiting: do not wait for the child to finish its load
        proc.kill()
        raise
    finally:
        recv.close()
        proc.join()
    with on_side(base_side):
        if status == "err":
            error = _unpack_error(payload)
            raise OutOfMemory(base, "loading it") if type(error) is MemoryError else error
        b = payload if status == "ok" else load(base, *base_args)
        check(b)
    with on_side("comparison side"):
        if comp_error is not None:
            raise comp_error
        assert comp is not None
        check(comp)
    return b, comp
