"""The registry of sealed formats: the one place that knows every format ``rdp-verify check`` verifies.

Each sealed JSON file records its format by name (``"format"``) and version (``"format_version"``); a
:class:`Format` is what ``check`` needs to know about one: the recorded name, what the confirmed line calls one
(``noun``), the module that defines its check and its :class:`~rdp_verify.certificates.fields.FieldPolicy`
(and, when another module holds it, the module whose ``FORMAT`` constant is the name), the versions it checks
with their JSON Schemas (in ``schemas/``), and the versions it refuses with the reason. :data:`FORMATS` lists
all of them; ``check`` dispatches on the recorded name (:func:`by_name`) and version (:meth:`Format.refusal`),
never on a file's shape.

Most formats are defined above this layer (in ``curves``, ``audit``, ``tradeoff``, ...), which the certificates
may not import (``tests/test_layout.py``). So the registry names each module by its dotted path as a string and
imports it only when a file of that format is checked (:meth:`Format.load`, by :mod:`importlib`, cached): no
upward import at import time, and ``rdp-verify --help`` stays light. ``tests/certificates/test_formats.py``
imports every registered module and holds it to its entry (name, check, policy, schema files), so a format
moved or renamed without its entry fails there, not in a user's ``check``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

__all__ = ["Format", "FORMATS", "RERUN", "by_name", "names"]

# Why a file of a version written before its format was sealed cannot be checked.
RERUN = "which was written before the format was sealed and cannot be checked: run the command again for a sealed one"


@dataclass(frozen=True)
class Format:
    """One sealed format.

    ``schemas`` pairs each version ``check`` verifies with its schema (``schemas/<schema>.schema.json``), oldest
    first, the last being the version written today; ``refused`` pairs each version it refuses in one line with the
    reason (a clause completing "... of format version N, "). A version on neither list is handed to the check,
    whose schema refuses it.
    """

    name: str  # the recorded "format"
    noun: str  # what the confirmed line calls one
    module: str  # the dotted module defining the check and the policy
    check: str  # the attribute name of its check: (the file's JSON) -> problem lines, empty when confirmed
    policy: str  # the attribute name of its FieldPolicy
    schemas: tuple[tuple[int, str], ...]
    refused: tuple[tuple[int, str], ...] = ()
    name_module: str | None = None  # the module whose FORMAT constant is ``name``, when not ``module``

    @property
    def versions(self) -> tuple[int, ...]:
        """The versions ``check`` verifies, oldest first."""
        return tuple(version for version, _ in self.schemas)

    @property
    def version(self) -> int:
        """The version written today."""
        return self.schemas[-1][0]

    @property
    def schema(self) -> str:
        """The schema of the version written today."""
        return self.schemas[-1][1]

    def refusal(self, version: Any) -> str | None:
        """Why a file of this format recording ``version`` cannot be checked, or None when it goes to the check."""
        for refused, why in self.refused:
            if version == refused:
                return why
        return None

    def load(self) -> tuple[Callable[[Any], list[str]], Any]:
        """The check and the field policy, imported from :attr:`module` on first use."""
        return _load(self.module, self.check, self.policy)


@lru_cache(maxsize=None)
def _load(module: str, check: str, policy: str) -> tuple[Callable[[Any], list[str]], Any]:
    found = importlib.import_module(module)
    return getattr(found, check), getattr(found, policy)


_SUPERSEDED_ONE_RUN = ("whose verdict was held against a coarse 231-vertex envelope, a rule replaced in version 2 "
                       "(issue 39): run the audit again for a checkable report")

FORMATS: tuple[Format, ...] = (
    Format("rdp_verify certificate", "certificate", "rdp_verify.certificates.certificate", "check_certificate",
           "POLICY", ((1, "certificate-v1"),), name_module="rdp_verify.certificates.certify"),
    Format("rdp_verify calibration", "certificate", "rdp_verify.calibration.certificate", "check_calibration",
           "POLICY", ((1, "calibration-v1"),)),
    Format("rdp_verify cdp claim", "certificate", "rdp_verify.cdp.check", "check_claim", "POLICY",
           ((1, "cdp-claim-v1"),), name_module="rdp_verify.cdp.certificate"),
    Format("rdp_verify privacy curve", "certificate", "rdp_verify.curves.certificate", "check_run_certificate",
           "POLICY", ((2, "privacy-curve-v2"),)),
    Format("rdp_verify trade-off curve", "certificate", "rdp_verify.tradeoff.certificate",
           "check_tradeoff_certificate", "POLICY", ((1, "tradeoff-v1"),)),
    Format("rdp_verify audit", "audit report", "rdp_verify.audit.check", "check_audit_report", "POLICY",
           ((3, "audit-v3"),), ((1, RERUN), (2, RERUN)), name_module="rdp_verify.audit.report"),
    Format("rdp_verify canary audit", "canary audit report", "rdp_verify.tradeoff.canary_report",
           "check_canary_report", "POLICY", ((1, "canary-audit-v1"), (2, "canary-audit-v2"))),
    Format("rdp_verify rdp table", "RDP table", "rdp_verify.audit.rdp_table", "check_rdp_table", "POLICY",
           ((2, "rdp-table-v2"), (3, "rdp-table-v3")), ((1, RERUN),)),
    Format("rdp_verify event privacy curve", "certificate", "rdp_verify.privacy_curve.certificate",
           "check_event_certificate", "POLICY", ((1, "event-curve-v1"),)),
    Format("rdp_verify one-run audit", "one-run audit report", "rdp_verify.tradeoff.one_run_report",
           "check_one_run_report", "POLICY", ((2, "one-run-audit-v2"),), ((1, _SUPERSEDED_ONE_RUN),)),
)

_BY_NAME = {fmt.name: fmt for fmt in FORMATS}


def by_name(name: Any) -> Format | None:
    """The registered format recorded as ``name`` (any JSON value), or None."""
    return _BY_NAME.get(name) if isinstance(name, str) else None


def names() -> list[str]:
    """The names of every registered format, sorted."""
    return sorted(_BY_NAME)
