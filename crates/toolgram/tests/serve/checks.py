"""The check the client scripts share: each one counted, a failed one raised with what was
expected; `passed()` prints the count tests/serve.rs looks for."""

_count = 0


def check(cond, what):
    global _count
    _count += 1
    if not cond:
        raise AssertionError(what)


def passed():
    print(f"{_count} checks passed")
