"""Certified noise calibration: the best σ, steps or q on a decimal grid with a proven ε ≤ target."""
