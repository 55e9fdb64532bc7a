"""companion.web.security: the PIN rate limiter (with a fake clock), PIN
comparison and PIN drawing."""

from __future__ import annotations

from companion.web.security import RateLimiter, make_pin, pin_matches


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def test_client_lockout_and_expiry():
    clk = Clock()
    lim = RateLimiter(per_client=3, global_limit=100, window=60, lockout=120, clock=clk)
    assert lim.fail("a").allowed and lim.fail("a").allowed
    v = lim.fail("a")
    assert not v.allowed and v.scope == "client" and v.retry_after == 120
    assert lim.check("b").allowed                      # another address is not locked
    clk.t += 119
    assert not lim.check("a").allowed and lim.check("a").retry_after == 1
    clk.t += 1
    assert lim.check("a").allowed                      # the lockout is over and the count reset
    assert lim.fail("a").allowed


def test_failures_outside_the_window_do_not_count():
    clk = Clock()
    lim = RateLimiter(per_client=3, global_limit=100, window=60, lockout=120, clock=clk)
    lim.fail("a")
    lim.fail("a")
    clk.t += 61
    assert lim.fail("a").allowed


def test_success_forgets_failures():
    clk = Clock()
    lim = RateLimiter(per_client=3, global_limit=100, window=60, lockout=120, clock=clk)
    lim.fail("a")
    lim.fail("a")
    lim.succeed("a")
    assert lim.fail("a").allowed and lim.fail("a").allowed


def test_global_lockout():
    clk = Clock()
    lim = RateLimiter(per_client=5, global_limit=4, window=60, lockout=30, clock=clk)
    for addr in "abc":
        assert lim.fail(addr).allowed
    v = lim.fail("d")
    assert not v.allowed and v.scope == "global" and v.retry_after == 30
    assert lim.check("zz").scope == "global"
    clk.t += 30
    assert lim.check("zz").allowed


def test_memory_is_bounded():
    lim = RateLimiter(per_client=5, global_limit=10**9, window=600, lockout=60, max_clients=100, clock=Clock())
    for k in range(1000):
        lim.fail(f"10.0.{k // 256}.{k % 256}")
    assert len(lim._fails) <= 100


def test_pin_helpers():
    pin = make_pin()
    assert len(pin) == 6 and pin.isdigit()
    assert pin_matches(pin, pin) and pin_matches(f" {pin} ", pin)
    assert not pin_matches("", pin) and not pin_matches(None, pin) and not pin_matches(pin + "0", pin)
