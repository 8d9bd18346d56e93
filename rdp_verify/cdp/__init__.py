"""The CDP family: zCDP, tCDP, Dwork–Rothblum CDP and the privacy-loss random variable of the SGM,
their conversions and their sealed claim certificates.

Imports the certificates, the methods and the foundations.
"""
