"""last_true: the largest index where a monotone predicate holds, by bisection."""

from hypothesis import given
from hypothesis import strategies as st

from rdp_verify.foundations.search import last_true


@given(st.integers(-50, 50), st.integers(1, 200), st.data())
def test_finds_the_boundary_with_logarithmic_evaluations(a, width, data):
    b = a + width
    boundary = data.draw(st.integers(a, b - 1))  # holds on [a, boundary], fails on (boundary, b]
    calls = []

    def holds(i):
        calls.append(i)
        return i <= boundary

    assert last_true(a, b, holds) == boundary
    assert a not in calls and all(a < i < b for i in calls) and len(calls) <= width.bit_length()
