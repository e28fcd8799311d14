"""The worker side of ``sparsenet launch``: ``python _worker.py script.py [args...]``.

torchrun starts this file (by path, so the worker imports nothing before the
script does) in every worker process. It runs ``script.py`` as ``__main__``
with ``sys.argv`` and ``sys.path[0]`` as ``python script.py args...`` would set
them. When the script raises, it prints the traceback (from the script's own
frames down) as Python would, writes it to torchrun's error file
(``TORCHELASTIC_ERROR_FILE``, torch's JSON format) so that the launcher's
report shows each failed rank's traceback without the script decorating its
entry point with ``@record``, and adds the exact time of the failure, from which
the launcher tells the first failure (the root cause) from its consequences on
the other ranks. Exit statuses are Python's: 1 for an uncaught exception, the
``SystemExit`` code otherwise.

>>> import json, os, subprocess, sys, tempfile
>>> with tempfile.TemporaryDirectory() as tmp:
...     script = os.path.join(tmp, "fail.py")
...     with open(script, "w") as f:
...         _ = f.write("import sys\\nraise ValueError(sys.argv[1:])\\n")
...     env = dict(os.environ, TORCHELASTIC_ERROR_FILE=os.path.join(tmp, "error.json"))
...     proc = subprocess.run([sys.executable, __file__, script, "a"], env=env,
...                           capture_output=True, text=True)
...     with open(env["TORCHELASTIC_ERROR_FILE"]) as f:
...         report = json.load(f)
>>> proc.returncode, report["message"]["message"]
(1, "ValueError: ['a']")
"""
import faulthandler
import json
import os
import runpy
import sys
import time
import traceback

#: The key of the failure's exact time (float seconds) in the error file's ``extraInfo``.
TIME_KEY = "sparsenet_time"


def _from_script(tb, script):
    """``tb`` without the frames above the script's first one (this file's, runpy's)."""
    start = tb
    while start is not None and start.tb_frame.f_code.co_filename != script:
        start = start.tb_next
    return start or tb


def _write_error_file(exc, tb, when):
    path = os.environ.get("TORCHELASTIC_ERROR_FILE")
    if not path:
        return
    data = {"message": {
        "message": f"{type(exc).__name__}: {exc}",
        "extraInfo": {"py_callstack": "".join(traceback.format_exception(type(exc), exc, tb)),
                      "timestamp": str(int(when)), TIME_KEY: repr(when)}}}
    with open(path, "w") as f:
        json.dump(data, f)


def main(argv):
    """Run ``argv[0]`` as ``__main__`` with ``sys.argv = argv``; return the exit status."""
    script = os.path.abspath(argv[0])
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(script)
    faulthandler.enable(all_threads=True)
    try:
        runpy.run_path(script, run_name="__main__")
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as exc:  # noqa: BLE001 -- reported, then the worker exits 1
        when = time.time()
        tb = _from_script(exc.__traceback__, script)
        _write_error_file(exc, tb, when)
        # torch's hook, set once a process group exists, prefixes "[rankN]:"
        sys.excepthook(type(exc), exc.with_traceback(tb), tb)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
