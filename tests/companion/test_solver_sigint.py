"""A solve in a process that ignores SIGINT (a background job of a script,
``nohup``-like starters) keeps ignoring it: the C core's Ctrl+C watch is not
put in place of SIG_IGN."""
import os
import signal

import pytest

from companion import solver


@pytest.mark.skipif(solver._c is None or not hasattr(solver._c, "watch_sigint"), reason="no C core")
def test_ignored_sigint_stays_ignored_during_a_solve():
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with solver._ctrl_c_stops_the_c_core():
            os.kill(os.getpid(), signal.SIGINT)      # ignored: no flag, no KeyboardInterrupt
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, old)
