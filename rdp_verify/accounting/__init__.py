"""RDP accounting of a DP-SGD run: composition, RDP → (ε, δ) conversions, the best ε over all
real orders (``optimal_order``) and libraries' fixed order lists.

Imports the methods and the foundations.
"""
