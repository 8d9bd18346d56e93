"""The run model: frozen event classes mirroring dp_accounting 0.6's ``dp_event.py`` (mechanism leaves, sampling
wrappers, composition) with three rdp_verify extensions, the neighbouring-relation enum (``model``); readers and
writers for JSON, dp_accounting's named tuples and live objects, and the one text rendering of a run (``read``);
flattening into counted components and today's phases (``flatten``); the JSON Schema of the event form
(``schema``). docs/events.md describes them.

Imports the foundations only (dp_accounting, an optional peer, is never imported: its events are read by class
name and fields).
"""

from .flatten import Component, components, phases_to_event, to_phases
from .model import *  # noqa: F403  (the event classes, NeighboringRelation, UnsupportedEvent)
from .model import __all__ as _model_all
from .read import from_dp_accounting, from_named_tuple_json, load_event, render, to_json

__all__ = [*_model_all, "Component", "components", "to_phases", "phases_to_event", "from_named_tuple_json",
           "load_event", "from_dp_accounting", "to_json", "render"]
