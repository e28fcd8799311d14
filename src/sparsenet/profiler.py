"""The profiler: ``mx.profiler``, MXNet 1.9.1's API over ``torch.profiler``.

Two profiles run side by side, as in MXNet, chosen by ``profile_process``:

``'worker'`` (the default)
    the operators this process runs, recorded by :mod:`torch.profiler` (CPU
    operators; CUDA kernels too when CUDA is available), plus the events of
    :class:`Domain`, :class:`Task`, :class:`Frame`, :class:`Event`,
    :class:`Counter` and :class:`Marker`, and a span per kvstore call. Written
    to ``filename``.
``'server'``
    sparsenet has no parameter-server processes: each rank of a distributed
    store serves its share of the keys itself. The server profile records the
    kvstore's own work on this rank (``init``, ``push``, ``pull``,
    ``row_sparse_pull`` and the collectives under them) as Chrome trace ``"X"``
    events named after the keys. Written, as MXNet's servers do, to
    ``'rank{r}_' + filename`` (the prefix goes on the file's name, in the
    file's folder). It needs a kvstore (``mx.kv.create``) in this process.

Both files are Chrome trace JSON (``chrome://tracing``, Perfetto), as MXNet's are,
with timestamps in microseconds since the epoch; they are written atomically.

When files are written: ``set_state('stop')`` writes the file (when ``continuous_dump``, MXNet's
default) and :func:`dump` writes it. With a distributed store of more than one
rank in the process, ``set_state('stop')`` of a running profile is collective:
after writing, each rank waits at a barrier for the others, so that right after
``stop`` returns every rank's file exists (MXNet's ``test_server_profiling.py``
reads them all from rank 0). Every rank must therefore stop its profiles in the
same order, as an SPMD program does.

>>> import os, json, tempfile
>>> import sparsenet as mx
>>> path = os.path.join(tempfile.mkdtemp(), 'profile.json')
>>> mx.profiler.set_config(filename=path, profile_all=True, aggregate_stats=True)
>>> mx.profiler.set_state('run')
>>> y = mx.nd.dot(mx.nd.ones((4, 4)), mx.nd.ones((4, 4)))
>>> mx.profiler.set_state('stop')
>>> trace = json.load(open(path))
>>> any(e['name'] == 'aten::mm' for e in trace['traceEvents'])
True
>>> 'aten::mm' in mx.profiler.dumps(reset=True)
True
>>> mx.profiler.set_config()    # back to the defaults
"""
import contextlib
import functools
import json
import os
import tempfile
import threading
import time
import warnings
import weakref

import torch

from .atomic import atomic_write
from .base import (InvalidArgumentError, InvalidArgumentTypeError, ParameterAssertionError,
                   StateError)

__all__ = ["set_config", "set_state", "dump", "dumps", "pause", "resume", "Domain", "Task",
           "Frame", "Event", "Counter", "Marker", "set_kvstore_handle", "profiler_set_config",
           "profiler_set_state", "dump_profile", "kvstore_span", "traced", "note_kvstore"]

PROCESSES = ("worker", "server")
_STATES = ("stop", "run")
_BOOLS = ("profile_all", "profile_symbolic", "profile_imperative", "profile_memory",
          "profile_api", "continuous_dump", "aggregate_stats")
#: MXNet 1.9.1's defaults (``ProfileConfigParam``); every ``set_config`` starts from them.
DEFAULTS = {"filename": "profile.json", "profile_all": False, "profile_symbolic": True,
            "profile_imperative": True, "profile_memory": True, "profile_api": True,
            "continuous_dump": True, "dump_period": 1.0, "aggregate_stats": False}
_TRUE = ("true", "1")
_FALSE = ("false", "0")
_SORT_KEYS = {"total": 1, "avg": 4, "min": 2, "max": 3, "count": 0}
_CATEGORY = {"cpu_op": "operator", "kernel": "gpu kernel", "gpu_memcpy": "gpu memcpy",
             "gpu_memset": "gpu memset", "cuda_runtime": "cuda runtime",
             "user_annotation": "user annotation"}
_SCOPES = {"global": "g", "process": "p", "thread": "t", "task": "t", "marker": "t"}


# ---------------------------------------------------------------------- arguments
def _check_process(profile_process, where):
    if profile_process not in PROCESSES:
        raise InvalidArgumentError(f"profiler.{where}: profile_process must be 'worker' or "
                                   f"'server', got {profile_process!r}")
    return profile_process


def _as_bool(name, value):
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
        return value.strip().lower() in _TRUE
    raise InvalidArgumentError(f"profiler.set_config: {name} expects a boolean (True/False, "
                               f"1/0 or 'true'/'false'), got {value!r}")


def _checked_config(kwargs):
    """MXNet's defaults updated with ``kwargs``, each checked; ``profile_process`` apart."""
    config = dict(DEFAULTS)
    for name, value in kwargs.items():
        if name in _BOOLS:
            config[name] = _as_bool(name, value)
        elif name == "filename":
            if not isinstance(value, (str, os.PathLike)) or not os.fspath(value):
                raise InvalidArgumentError(f"profiler.set_config: filename expects a non-empty "
                                           f"str or path, got {value!r}")
            config[name] = os.fspath(value)
        elif name == "dump_period":
            try:
                period = float(value)
            except (TypeError, ValueError):
                period = float("nan")
            if isinstance(value, bool) or not period > 0:
                raise InvalidArgumentError(f"profiler.set_config: dump_period expects a number "
                                           f"of seconds > 0, got {value!r}")
            config[name] = period
        else:
            known = ", ".join(list(DEFAULTS) + ["profile_process"])
            raise InvalidArgumentError(f"profiler.set_config: unknown argument {name!r}; the "
                                       f"arguments are {known}")
    return config


# ---------------------------------------------------------------------- the kvstore handle
_HANDLE = [None]  # a weak reference to the store whose rank names the files and that barriers


def set_kvstore_handle(handle):
    """Make ``handle`` (a KVStore) the store the profiler works with (MXNet's function).

    ``mx.kv.create`` calls it; the store gives the rank of the server file's name
    and, when distributed, the barrier of ``set_state('stop')``.
    """
    try:
        _HANDLE[0] = weakref.ref(handle)
    except TypeError:
        _HANDLE[0] = lambda: handle


def note_kvstore(store, distributed=False):
    """Called by every new KVStore: a distributed one becomes the handle; a local one only
    when there is no live handle (a Trainer's own local store does not displace it)."""
    current = _HANDLE[0]() if _HANDLE[0] is not None else None
    if distributed or current is None:
        set_kvstore_handle(store)


def _store(where, needed):
    store = _HANDLE[0]() if _HANDLE[0] is not None else None
    if store is None and needed:
        raise StateError(f"profiler.{where}: profile_process='server' profiles the kvstore of "
                         f"this process, and there is none; create it first, e.g. "
                         f"kv = mx.kv.create('dist_sync')")
    return store


def _rank_and_world(store):
    if store is None:
        return 0, 1
    try:
        return int(store.rank), int(store.num_workers)
    except Exception:  # noqa: BLE001  # a store whose process group is gone: one process
        return 0, 1


# ---------------------------------------------------------------------- one profile
class _Profile:
    """The state of one profile (``'worker'`` or ``'server'``): its configuration, whether
    it runs, the events collected so far, the aggregate statistics."""

    def __init__(self, kind):
        self.kind = kind
        self.config = dict(DEFAULTS)
        self.running = False
        self.paused = False
        self.events = []
        self.meta = {}
        self.stats = {}
        self.session = None
        self.lock = threading.RLock()

    @property
    def recording(self):
        return self.running and not self.paused

    def ops_enabled(self):
        c = self.config
        return c["profile_all"] or c["profile_imperative"] or c["profile_symbolic"]

    # -------------------------------------------------------------- torch sessions
    def start_session(self):
        if self.kind != "worker" or not self.ops_enabled():
            return
        activities = [torch.profiler.ProfilerActivity.CPU]
        if torch.cuda.is_available():
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        self.session = torch.profiler.profile(
            activities=activities, record_shapes=self.config["profile_all"],
            profile_memory=self.config["profile_memory"] or self.config["profile_all"])
        self.session.start()

    def end_session(self):
        session, self.session = self.session, None
        if session is None:
            return
        session.stop()
        fd, tmp = tempfile.mkstemp(prefix="sparsenet-profile-", suffix=".json")
        os.close(fd)
        try:
            session.export_chrome_trace(tmp)
            with open(tmp, "r", encoding="utf-8") as f:
                trace = json.load(f)
        finally:
            os.unlink(tmp)
        base_us = trace.get("baseTimeNanoseconds", 0) / 1000.0
        for e in trace.get("traceEvents", []):
            if not isinstance(e, dict):
                continue
            if "ts" in e:
                e["ts"] = float(e["ts"]) + base_us
            if e.get("ph") == "M":
                self.meta.setdefault((e.get("name"), e.get("pid"), e.get("tid")), e)
            else:
                self.add(e)

    # -------------------------------------------------------------- events
    def add(self, event):
        with self.lock:
            self.events.append(event)
            if (self.config["aggregate_stats"] and event.get("ph") == "X" and "dur" in event
                    and event.get("cat") != "Trace"):  # torch's whole-session span
                cat = _CATEGORY.get(event.get("cat"), event.get("cat") or "other")
                row = self.stats.setdefault((cat, event.get("name", "")),
                                            [0, 0.0, float("inf"), 0.0])
                dur = float(event["dur"])
                row[0] += 1
                row[1] += dur
                row[2] = min(row[2], dur)
                row[3] = max(row[3], dur)

    def path(self, store):
        filename = self.config["filename"]
        if self.kind == "worker":
            return filename
        rank, _ = _rank_and_world(store)
        folder, name = os.path.split(filename)
        return os.path.join(folder, f"rank{rank}_{name}")

    def write(self, store):
        rank, world = _rank_and_world(store)
        pid = os.getpid()
        label = f"kvstore server, rank {rank} of {world}" if self.kind == "server" else \
            f"worker, rank {rank} of {world}"
        with self.lock:
            meta = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                     "args": {"name": label}}]
            meta += [e for e in self.meta.values()
                     if not (e.get("name") == "process_name" and e.get("pid") == pid)]
            events = sorted(self.events, key=lambda e: e.get("ts", 0.0))
            doc = {"traceEvents": meta + events, "displayTimeUnit": "ms",
                   "otherData": {"producer": "sparsenet.profiler (torch.profiler)",
                                 "profile_process": self.kind, "rank": rank,
                                 "num_workers": world, "time_unit": "us since the epoch"}}
        blob = json.dumps(doc).encode("utf-8")
        atomic_write(self.path(store), lambda f: f.write(blob))


_PROFILES = {"worker": _Profile("worker"), "server": _Profile("server")}
_TRACING = [False]  # whether a kvstore call has to do anything (read by traced/kvstore_span)


def _refresh_tracing():
    _TRACING[0] = _PROFILES["server"].recording or _PROFILES["worker"].recording


# ---------------------------------------------------------------------- public functions
def set_config(**kwargs):
    """Configure a profile (keyword arguments only); unset arguments take MXNet's defaults.

    Parameters
    ----------
    filename : str, default 'profile.json'
        The trace file (Chrome trace JSON). The server profile writes
        ``rank{r}_<name>`` in the same folder.
    profile_all : bool, default False
        Everything: operators with their input shapes, memory.
    profile_symbolic, profile_imperative : bool, default True
        Operator events (torch records both alike; either one turns them on).
    profile_memory : bool, default True
        torch's memory events.
    profile_api : bool, default True
        Accepted (MXNet's C API calls have no counterpart).
    continuous_dump : bool, default True
        Write the file at every ``set_state('stop')``; else only at :func:`dump`.
    dump_period : float, default 1
        Accepted; torch's profiler exports a trace only when a session ends, so
        the file is written at ``stop``/``dump``, not periodically.
    aggregate_stats : bool, default False
        Keep per-operator statistics for :func:`dumps`.
    profile_process : {'worker', 'server'}, default 'worker'
        The profile to configure.

    Raises
    ------
    InvalidArgumentError
        An unknown argument, or a value of the wrong kind (MXNet refuses them too).
    StateError
        ``profile_process='server'`` with no kvstore in this process.

    Examples
    --------
    >>> import sparsenet as mx
    >>> mx.profiler.set_config(profile_all=True, bogus=1)
    Traceback (most recent call last):
    ...
    sparsenet.base.InvalidArgumentError: profiler.set_config: unknown argument 'bogus'; ...
    """
    kwargs = dict(kwargs)
    process = _check_process(kwargs.pop("profile_process", "worker"), "set_config")
    config = _checked_config(kwargs)
    _store("set_config", process == "server")
    profile = _PROFILES[process]
    with profile.lock:
        profile.config = config


def set_state(state="stop", profile_process="worker"):
    """Run or stop a profile.

    Parameters
    ----------
    state : {'stop', 'run'}
    profile_process : {'worker', 'server'}

    Notes
    -----
    ``'stop'`` of a running profile writes its file (``continuous_dump``) and, with a
    distributed store of more than one rank, waits at a barrier for every rank (see
    the module's notes). Stopping a stopped profile does nothing.
    """
    if state not in _STATES:
        raise InvalidArgumentError(f"profiler.set_state: state must be 'stop' or 'run', got "
                                   f"{state!r}")
    process = _check_process(profile_process, "set_state")
    store = _store("set_state", process == "server")
    profile = _PROFILES[process]
    if state == "run":
        with profile.lock:
            if not profile.running:
                profile.running, profile.paused = True, False
                profile.start_session()
        _refresh_tracing()
        return
    with profile.lock:
        if not profile.running:
            return
        profile.end_session()
        profile.running = profile.paused = False
    _refresh_tracing()
    problem = None
    try:
        if profile.config["continuous_dump"]:
            profile.write(store)
    except OSError as e:
        problem = e
    _, world = _rank_and_world(store)
    if world > 1:
        store.barrier()
    if problem is not None:
        raise problem


def dump(finished=True, profile_process="worker"):
    """Write the profile's file now (not collective).

    Parameters
    ----------
    finished : bool, default True
        Stop the profile and forget its events after writing (MXNet: no more
        dumps); with False a running profile goes on and the next file holds
        these events too.
    profile_process : {'worker', 'server'}
    """
    process = _check_process(profile_process, "dump")
    store = _store("dump", process == "server")
    profile = _PROFILES[process]
    with profile.lock:
        resume_after = profile.recording and not finished
        profile.end_session()
        if resume_after:
            profile.start_session()
        if finished:
            profile.running = profile.paused = False
    _refresh_tracing()
    profile.write(store)
    if finished:
        with profile.lock:
            profile.events, profile.meta = [], {}


def dumps(reset=False, format="table", sort_by="total", ascending=False):  # noqa: A002
    """The aggregate statistics (``aggregate_stats=True``) as a table or JSON text.

    Parameters
    ----------
    reset : bool
        Clear the statistics after reading them.
    format : {'table', 'json'}
    sort_by : {'total', 'avg', 'min', 'max', 'count'}
    ascending : bool

    Returns
    -------
    str
        Empty when no profile keeps statistics (as MXNet). Times in ms.

    Raises
    ------
    ParameterAssertionError
        A value outside the choices (an ``AssertionError`` too, as MXNet raises).
    """
    if format not in ("table", "json"):
        raise ParameterAssertionError(f"Invalid value provided for format: {format}. Support: "
                                      f"'table', 'json'")
    if sort_by not in _SORT_KEYS:
        raise ParameterAssertionError(f"Invalid value provided for sort_by: {sort_by}. Support: "
                                      f"'total', 'avg', 'min', 'max', 'count'")
    for name, value in (("ascending", ascending), ("reset", reset)):
        if value not in (False, True):
            raise ParameterAssertionError(f"Invalid value provided for {name}: {value}. "
                                          f"Support: False, True")
    keeping = [p for p in _PROFILES.values() if p.config["aggregate_stats"]]
    if not keeping:
        return ""
    worker = _PROFILES["worker"]
    with worker.lock:  # fold in the running torch session
        if worker.session is not None:
            worker.end_session()
            worker.start_session()
    rows = {}
    for p in keeping:
        with p.lock:
            for (cat, name), (n, total, lo, hi) in p.stats.items():
                rows.setdefault(cat, []).append((n, total / 1e3, lo / 1e3, hi / 1e3,
                                                 total / 1e3 / n, name))
            if reset:
                p.stats = {}
    col = _SORT_KEYS[sort_by]
    for cat in rows:
        rows[cat].sort(key=lambda r: r[col], reverse=not ascending)
    if format == "json":
        time_ = {cat: {r[5]: {"Count": r[0], "Total": round(r[1], 4), "Min": round(r[2], 4),
                              "Max": round(r[3], 4), "Avg": round(r[4], 4)} for r in rs}
                 for cat, rs in sorted(rows.items())}
        return json.dumps({"Time": time_, "Unit": {"Time": "ms"}}, indent=4)
    lines = ["", "Profile Statistics:", "\tNote the difference in units for different entries."]
    for cat, rs in sorted(rows.items()):
        lines += [cat, "=================",
                  f"{'Name':<30}{'Total Count':>11}{'Time (ms)':>17}{'Min Time (ms)':>17}"
                  f"{'Max Time (ms)':>17}{'Avg Time (ms)':>17}",
                  f"{'----':<30}{'-----------':>11}{'---------':>17}{'-------------':>17}"
                  f"{'-------------':>17}{'-------------':>17}"]
        for n, total, lo, hi, avg, name in rs:
            lines.append(f"{name:<30}{n:>11}{total:>17.4f}{lo:>17.4f}{hi:>17.4f}{avg:>17.4f}")
        lines.append("")
    return "\n".join(lines) + "\n"


def pause(profile_process="worker"):
    """Pause a running profile: nothing is recorded until :func:`resume`."""
    process = _check_process(profile_process, "pause")
    _store("pause", process == "server")
    profile = _PROFILES[process]
    with profile.lock:
        if profile.recording:
            profile.end_session()
            profile.paused = True
    _refresh_tracing()


def resume(profile_process="worker"):
    """Resume a paused profile."""
    process = _check_process(profile_process, "resume")
    _store("resume", process == "server")
    profile = _PROFILES[process]
    with profile.lock:
        if profile.running and profile.paused:
            profile.paused = False
            profile.start_session()
    _refresh_tracing()


def profiler_set_config(mode="symbolic", filename="profile.json"):
    """Deprecated: ``set_config(profile_<mode>=True, filename=filename)``."""
    warnings.warn("profiler.profiler_set_config() is deprecated. Please use "
                  "profiler.set_config() instead", DeprecationWarning, stacklevel=2)
    if mode not in ("symbolic", "all"):
        raise InvalidArgumentError(f"profiler.profiler_set_config: mode must be 'symbolic' or "
                                   f"'all', got {mode!r}")
    set_config(**{"profile_" + mode: True, "filename": filename})


def profiler_set_state(state="stop"):
    """Deprecated: :func:`set_state`."""
    warnings.warn("profiler.profiler_set_state() is deprecated. Please use "
                  "profiler.set_state() instead", DeprecationWarning, stacklevel=2)
    set_state(state)


def dump_profile():
    """Deprecated: :func:`dump`."""
    warnings.warn("profiler.dump_profile() is deprecated. Please use profiler.dump() instead",
                  DeprecationWarning, stacklevel=2)
    dump(True)


# ---------------------------------------------------------------------- user objects
def _now_us():
    return time.time_ns() / 1000.0


def _record(event):
    """Add a user object's event to the worker profile, if it records."""
    worker = _PROFILES["worker"]
    if worker.recording:
        event.setdefault("pid", os.getpid())
        event.setdefault("tid", threading.get_ident() % (1 << 31))
        worker.add(event)


def _checked_name(name, what):
    if not isinstance(name, str):
        raise InvalidArgumentTypeError(f"profiler.{what}: name must be a str, got "
                                       f"{type(name).__name__}")
    return name


class Domain:
    """A category for tasks, frames, counters and markers (the trace's ``cat``).

    >>> import sparsenet as mx
    >>> d = mx.profiler.Domain('io')
    >>> str(d), d.new_task('read').name
    ('io', 'read')
    """

    def __init__(self, name):
        self.name = _checked_name(name, "Domain")

    def __str__(self):
        return self.name

    def new_task(self, name):
        """A :class:`Task` of this domain."""
        return Task(self, name)

    def new_frame(self, name):
        """A :class:`Frame` of this domain."""
        return Frame(self, name)

    def new_counter(self, name, value=None):
        """A :class:`Counter` of this domain."""
        return Counter(self, name, value)

    def new_marker(self, name):
        """A :class:`Marker` of this domain."""
        return Marker(self, name)


class _Duration:
    """A timed scope: ``start()``/``stop()`` (or ``with``) records one ``"X"`` event."""

    _what = "Event"

    def __init__(self, name, category):
        self.name = _checked_name(name, self._what)
        self._category = category
        self._started = None

    def __str__(self):
        return self.name

    def start(self):
        """Start timing."""
        self._started = _now_us()

    def stop(self):
        """Stop timing and record the event (when the worker profile records)."""
        if self._started is None:
            raise StateError(f"profiler.{self._what} {self.name!r}: stop() without start()")
        began, self._started = self._started, None
        _record({"name": self.name, "cat": self._category, "ph": "X", "ts": began,
                 "dur": _now_us() - began})

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False


class Task(_Duration):
    """A unit of work of a :class:`Domain`, timed with ``start()``/``stop()``."""

    _what = "Task"

    def __init__(self, domain, name):
        super().__init__(name, str(domain))
        self.domain = domain


class Frame(_Duration):
    """A frame of a :class:`Domain` (category ``'<domain>,frame'``)."""

    _what = "Frame"

    def __init__(self, domain, name):
        super().__init__(name, f"{domain},frame")
        self.domain = domain


class Event(_Duration):
    """A named event, timed with ``start()``/``stop()`` (category ``'event'``).

    >>> import sparsenet as mx
    >>> with mx.profiler.Event('load') as e:
    ...     pass
    >>> e.name
    'load'
    """

    _what = "Event"

    def __init__(self, name):
        super().__init__(name, "event")


class Counter:
    """A value tracked over time (Chrome ``"C"`` events).

    >>> import sparsenet as mx
    >>> c = mx.profiler.Domain('d').new_counter('batches', 1)
    >>> c += 2
    >>> c.value
    3
    """

    def __init__(self, domain, name, value=None):
        self.name = _checked_name(name, "Counter")
        self.domain = domain
        self.value = 0
        if value is not None:
            self.set_value(value)

    def __str__(self):
        return self.name

    def set_value(self, value):
        """Set the counter to the int ``value``."""
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidArgumentTypeError(f"profiler.Counter {self.name!r}: value must be an "
                                           f"int, got {type(value).__name__}")
        self.value = value
        _record({"name": self.name, "cat": str(self.domain), "ph": "C", "ts": _now_us(),
                 "args": {self.name: value}})

    def increment(self, delta=1):
        """Add ``delta``."""
        self.set_value(self.value + int(delta))

    def decrement(self, delta=1):
        """Subtract ``delta``."""
        self.set_value(self.value - int(delta))

    def __iadd__(self, delta):
        self.increment(delta)
        return self

    def __isub__(self, delta):
        self.decrement(delta)
        return self


class Marker:
    """An instant in time (a Chrome ``"i"`` event) of a :class:`Domain`."""

    def __init__(self, domain, name):
        self.name = _checked_name(name, "Marker")
        self.domain = domain

    def mark(self, scope="process"):
        """Record the instant; ``scope`` is 'global', 'process', 'thread', 'task' or 'marker'."""
        if scope not in _SCOPES:
            raise InvalidArgumentError(f"profiler.Marker {self.name!r}: scope must be one of "
                                       f"{', '.join(map(repr, _SCOPES))}, got {scope!r}")
        _record({"name": self.name, "cat": f"{self.domain},instant_marker", "ph": "i",
                 "ts": _now_us(), "s": _SCOPES[scope]})


# ---------------------------------------------------------------------- kvstore hooks
_LOCAL = threading.local()
_MAX_KEYS_IN_NAME = 8


def _key_names(key):
    if isinstance(key, dict):
        key = list(key)
    if isinstance(key, (list, tuple)):
        return [str(k) for k in key]
    return [] if key is None else [str(key)]


class _Span:
    """One kvstore call, recorded in the server profile (and, as a ``record_function``
    scope, in the worker's torch trace). A call of the same operation inside it (a
    subclass calling its base) is not recorded twice."""

    __slots__ = ("op", "key", "began", "scope", "nested")

    def __init__(self, op, key):
        self.op, self.key = op, key

    def __enter__(self):
        stack = _LOCAL.__dict__.setdefault("ops", [])
        self.nested = bool(stack) and stack[-1] == self.op
        stack.append(self.op)
        if self.nested:
            return self
        keys = _key_names(self.key)
        shown = ",".join(keys[:_MAX_KEYS_IN_NAME])
        if len(keys) > _MAX_KEYS_IN_NAME:
            shown += f",... ({len(keys)} keys)"
        self.key = (f"kvstore.{self.op} {shown}".rstrip(), keys)
        self.scope = None
        if _PROFILES["worker"].session is not None:
            self.scope = torch.profiler.record_function(self.key[0])
            self.scope.__enter__()
        self.began = _now_us()
        return self

    def __exit__(self, *exc):
        _LOCAL.ops.pop()
        if self.nested:
            return False
        end = _now_us()
        if self.scope is not None:
            self.scope.__exit__(*exc)
        server = _PROFILES["server"]
        if server.recording:
            server.add({"name": self.key[0], "cat": "kvstore", "ph": "X", "ts": self.began,
                        "dur": end - self.began, "pid": os.getpid(),
                        "tid": threading.get_ident() % (1 << 31),
                        "args": {"op": self.op, "keys": self.key[1]}})
        return False


_OFF = contextlib.nullcontext()  # reusable: what kvstore_span gives while nothing records


def kvstore_span(op, key=None):
    """A context manager around one kvstore operation ``op`` on ``key`` (a key, a list of
    keys, or a dict keyed by them): a no-op unless a profile records.

    >>> with kvstore_span('push', [3, 'w']):
    ...     pass
    """
    if not _TRACING[0]:
        return _OFF
    return _Span(op, key)


def traced(op):
    """Decorate a kvstore method ``method(self, key, ...)`` with :func:`kvstore_span`.

    The key is the first argument after ``self`` (or ``key=``); with profiling off
    the wrapper costs one flag test.
    """
    def decorate(method):
        @functools.wraps(method)
        def wrapper(self, *args, **kwargs):
            if not _TRACING[0]:
                return method(self, *args, **kwargs)
            with _Span(op, args[0] if args else kwargs.get("key")):
                return method(self, *args, **kwargs)
        return wrapper
    return decorate
