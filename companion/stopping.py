"""Stop signals taken as Ctrl+C: a service manager's stop (SIGTERM) and a
closed terminal (SIGHUP) end a command as Ctrl+C does, so what it was
writing is cleaned up or finished (Python's ``signal`` module docs: handlers
run in the main thread between bytecodes).

Used by the referee (:mod:`companion.commands.referee`), ``companion game``
(:func:`deferred_sigint` around a write) and every set of output files
(:class:`companion.files.OutputFiles`: a print command killed by SIGTERM
left its hidden temporary files behind, a break-test, session 58).
"""

from __future__ import annotations

import contextlib
import signal
import threading

#: signals that stop the referee as Ctrl+C does: a service manager's stop
#: (SIGTERM) and a closed terminal (SIGHUP) judge what was seen, as Ctrl+C
#: does, where they had killed the process with no line (a break-test,
#: session 50; the events file and ledger were still consistent)
STOP_SIGNALS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n))


#: a stop signal was taken (a KeyboardInterrupt raised) in the current
#: :func:`stop_signals` block: later ones are let go, since the command is
#: already stopping (systemd sends SIGTERM then SIGHUP; a second interrupt
#: cut the clean-up of the first short, leaving temporaries behind, a
#: break-test, session 58)
_stopping = False


def _stop(signum, frame):
    global _stopping
    if _stopping:
        return
    _stopping = True
    raise KeyboardInterrupt


@contextlib.contextmanager
def stop_signals():
    """Within the block, SIGTERM and SIGHUP raise :class:`KeyboardInterrupt`
    as Ctrl+C does (only in the main thread, and only over the signals'
    default handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    global _stopping
    ours = [n for n in STOP_SIGNALS if signal.getsignal(n) is signal.SIG_DFL]
    if ours:
        _stopping = False
    for n in ours:
        signal.signal(n, _stop)
    try:
        yield
    finally:
        for n in ours:
            signal.signal(n, signal.SIG_DFL)


@contextlib.contextmanager
def deferred_sigint():
    """Hold a Ctrl+C (SIGINT), or a stop signal taken as one
    (:func:`stop_signals`), that comes during the block until it ends,
    then raise :class:`KeyboardInterrupt` as it would have been raised.

    Judging a frame writes each event to the ledger and then to the events
    file: a Ctrl+C between the two left the ledger with an event the events
    file and the closing line ("the 1 event found so far") did not have (a
    break-test's stop while SQLite wrote a penalty).  A frame takes
    milliseconds, so the stop is not felt later.  Only in the main thread
    and only over Python's own handler (a SIGINT ignored, or handled by
    someone else, is left so).  An exception leaving the block is not
    replaced by the held Ctrl+C."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    mine = [n for n, h in [(signal.SIGINT, signal.default_int_handler)] + [(n, _stop) for n in STOP_SIGNALS]
            if signal.getsignal(n) is h]
    if not mine:
        yield
        return
    held: list[int] = []
    before = {n: signal.getsignal(n) for n in mine}
    for n in mine:
        signal.signal(n, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        for n, h in before.items():
            signal.signal(n, h)
    if held:
        raise KeyboardInterrupt
