"""Hypothesis strategies: random event trees of every class (valid by construction)."""

from fractions import Fraction

from hypothesis import strategies as st

from rdp_verify.events import model as m

small = st.fractions(min_value=0, max_value=20, max_denominator=1000)
positive = small.filter(lambda x: x > 0)
probability = st.one_of(st.sampled_from([Fraction(0), Fraction(1), Fraction(1, 100), Fraction(1, 10**13)]),
                        st.fractions(min_value=0, max_value=1, max_denominator=1000))
sigma = st.one_of(st.sampled_from([Fraction(0), Fraction(1, 100), Fraction(1), Fraction(2 * 10**6)]), positive)
count = st.one_of(st.integers(0, 4), st.sampled_from([10**6, 2 * 10**6]))


@st.composite
def mixture(draw):
    n = draw(st.integers(1, 3))
    weights = draw(st.lists(st.integers(1, 9), min_size=n, max_size=n))
    return m.MixtureOfGaussiansDpEvent(draw(positive), draw(st.lists(small, min_size=n, max_size=n)),
                                       [Fraction(w, sum(weights)) for w in weights])


@st.composite
def without_replacement(draw, child):
    n = draw(st.integers(0, 50))
    return m.SampledWithoutReplacementDpEvent(n, draw(st.integers(0, n)), draw(child))


@st.composite
def per_epoch(draw, child):
    b = draw(st.integers(1, 5))
    cls = draw(st.sampled_from([m.ShuffledDpEvent, m.BallsInBinsDpEvent]))
    return cls(b * draw(st.integers(1, 5)), b, draw(st.integers(0, 7)), draw(child))


gaussian = st.builds(m.GaussianDpEvent, sigma)
leaves = st.one_of(
    gaussian, gaussian,  # the Gaussian family twice as likely
    st.builds(m.LaplaceDpEvent, small),
    st.builds(m.DiscreteLaplaceDpEvent, positive, st.integers(0, 3)),
    st.builds(m.DiscreteGaussianDpEvent, positive, st.integers(0, 3)),
    st.builds(m.RandomizedResponseDpEvent, probability, st.integers(1, 5)),
    mixture(),
    st.builds(m.ZCDpEvent, small, small),
    st.builds(m.SingleEpochTreeAggregationDpEvent, small,
              st.one_of(st.integers(0, 5), st.lists(st.integers(0, 5), min_size=1, max_size=3))),
    st.builds(m.TruncatedSubsampledGaussianDpEvent, st.integers(1, 100), probability, st.integers(1, 10), sigma),
    st.builds(m.NoOpDpEvent), st.builds(m.NonPrivateDpEvent), st.builds(m.UnsupportedDpEvent),
)


def _extend(child):
    return st.one_of(
        st.builds(m.PoissonSampledDpEvent, probability, child),
        without_replacement(child),
        st.builds(m.SampledWithReplacementDpEvent, st.integers(0, 50), st.integers(0, 60), child),
        per_epoch(child),
        st.builds(m.SelfComposedDpEvent, child, count),
        st.builds(m.ComposedDpEvent, st.lists(child, max_size=3)),
        st.builds(m.RepeatAndSelectDpEvent, child, small, st.one_of(small, st.just(float("inf")))),
    )


trees = st.recursive(leaves, _extend, max_leaves=8)

# The Gaussian family the accountants know, with the events around it (for to_phases against _phases): mostly
# steps inside the run domain, so that many trees have phases, and now and then one that is refused
_good_gaussian = st.builds(m.GaussianDpEvent, st.fractions(min_value=Fraction(1, 2), max_value=20,
                                                           max_denominator=100))
_good = st.one_of(
    st.builds(m.PoissonSampledDpEvent, st.fractions(min_value=Fraction(1, 1000), max_value=1, max_denominator=1000),
              _good_gaussian),
    _good_gaussian,
)
_rare = st.one_of(
    st.builds(m.PoissonSampledDpEvent, probability, gaussian), gaussian, without_replacement(gaussian),
    st.builds(m.NoOpDpEvent), st.builds(m.LaplaceDpEvent, small), st.builds(m.NonPrivateDpEvent),
)
gaussian_family = st.recursive(
    st.one_of(*[_good] * 6, _rare),
    lambda child: st.one_of(
        *[st.builds(m.SelfComposedDpEvent, child, st.integers(0, 4))] * 3,
        *[st.builds(m.ComposedDpEvent, st.lists(child, max_size=3))] * 3,
        st.builds(m.SelfComposedDpEvent, child, count),
        st.builds(m.PoissonSampledDpEvent, probability, child),
        without_replacement(child),
    ),
    max_leaves=5,
)
