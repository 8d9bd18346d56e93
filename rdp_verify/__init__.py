"""rdp_verify: certified Rényi-DP values of the Sampled Gaussian Mechanism.

See README.md. The mathematics follows Mironov, Talwar, Zhang, "Rényi
Differential Privacy of the Sampled Gaussian Mechanism" (2019).
"""

__version__ = "0.2.0"
