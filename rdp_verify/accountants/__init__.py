"""Drop-in certified accountants: dp_accounting's and Opacus's interfaces, answering with proven bounds."""

from .dp_accounting_api import CertifiedPldAccountant, UnsupportedEventError
from .ledger import CertificationError
from .opacus_api import CertifiedAccountant

__all__ = ["CertifiedPldAccountant", "CertifiedAccountant", "CertificationError", "UnsupportedEventError"]
