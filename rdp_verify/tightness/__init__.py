"""How tight the paper's bounds are: Figure 1, Table 1, Lemmas 9–10, Theorem 5 for Laplace noise,
and the drawing of Figure 1 (``plots``).

Imports the certificates (Theorem 11), the methods and the foundations.
"""
