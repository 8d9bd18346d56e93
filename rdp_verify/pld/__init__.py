"""Proven privacy-loss distributions, knowing no mechanism: the loss grid (``grid``), the dominating and dominated
discrete pairs of a curve, by connect-the-dots and lowered chords (``pairs``), the losses of a monotone pair rounded
up and down to the grid (``rounding``), and exact integer composition with directed rounding, read off as δ(ε) and
ε(δ) (``compose``).

Imports only the foundations; the mechanisms (``curves`` for the Sampled Gaussian step, ``mechanisms`` for the others)
give it their curves and PLDs.
"""
