"""The registry of sealed formats (``rdp_verify.certificates.formats``): every entry is held to the module it names
(the recorded name, the check, the field policy, the schemas of its versions), and ``rdp-verify check`` verifies
only what it lists, by the recorded name and version."""

import importlib
import json
from importlib.resources import files

import pytest

from rdp_verify.certificates.fields import FieldPolicy
from rdp_verify.certificates.formats import FORMATS, RERUN, Format, by_name, names
from rdp_verify.cli import main

SCHEMAS = files("rdp_verify.certificates").joinpath("schemas")
FORMAT_IDS = [fmt.name for fmt in FORMATS]


def test_the_ten_sealed_formats_are_registered_once_each():
    assert len(FORMATS) == 10
    assert len({fmt.name for fmt in FORMATS}) == len(FORMATS)
    assert names() == sorted(fmt.name for fmt in FORMATS)
    assert all(isinstance(fmt, Format) and fmt.name.startswith("rdp_verify ") for fmt in FORMATS)


@pytest.mark.parametrize("fmt", FORMATS, ids=FORMAT_IDS)
def test_each_entry_is_what_its_module_defines(fmt):
    named = importlib.import_module(fmt.name_module or fmt.module)
    assert named.FORMAT == fmt.name
    module = importlib.import_module(fmt.module)
    check, policy = fmt.load()
    assert callable(check) and check is getattr(module, fmt.check)
    assert isinstance(policy, FieldPolicy) and policy is getattr(module, fmt.policy)
    assert fmt.load() is fmt.load()  # imported once
    # the versions written today and their schemas, where the module names them
    if hasattr(named, "FORMAT_VERSION"):
        written = {named.FORMAT_VERSION, getattr(named, "EVENT_FORMAT_VERSION", named.FORMAT_VERSION)}
        assert written <= set(fmt.versions) and max(written) == fmt.version
    for mod in {named, module}:  # SCHEMA, and the schemas of other versions a module exports
        for constant in ("SCHEMA", "EVENT_SCHEMA", "SCHEMA_V1"):
            if constant == "SCHEMA" and hasattr(mod, constant) or constant in getattr(mod, "__all__", ()):
                assert getattr(mod, constant) in dict(fmt.schemas).values(), (mod.__name__, constant)


@pytest.mark.parametrize("fmt", FORMATS, ids=FORMAT_IDS)
def test_each_checked_version_has_its_schema_file_and_no_version_is_both_checked_and_refused(fmt):
    assert fmt.schemas and list(fmt.versions) == sorted(set(fmt.versions))
    for version, schema in fmt.schemas:
        assert schema.endswith(f"-v{version}")
        doc = json.loads(SCHEMAS.joinpath(f"{schema}.schema.json").read_text("utf-8"))
        assert isinstance(doc, dict)
    assert fmt.schema == fmt.schemas[-1][1] and fmt.version == fmt.versions[-1]
    refused = [version for version, _ in fmt.refused]
    assert not set(refused) & set(fmt.versions) and all(v < fmt.version for v in refused)
    assert all(fmt.refusal(v) for v in refused) and fmt.refusal(fmt.version) is None


def test_lookup_is_by_the_exact_recorded_name():
    assert by_name("rdp_verify audit").noun == "audit report"
    assert by_name("rdp_verify audit").refusal(2) == RERUN
    for name in ("rdp_verify something else", "RDP_VERIFY AUDIT", "rdp_verify audit ", "", None, 1, ["x"], {"a": 1}):
        assert by_name(name) is None


def test_importing_the_registry_imports_no_format_above_the_certificates():
    import subprocess
    import sys

    code = ("import sys, rdp_verify.certificates.formats; "
            "print(sorted(m for m in sys.modules if m.startswith('rdp_verify.') "
            "and m.split('.')[1] not in ('certificates', 'methods', 'foundations')))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"


@pytest.mark.parametrize("content", [
    {"format": "rdp_verify something else", "format_version": 1, "content_hash": "sha256:0"},
    {"format": ["rdp_verify certificate"], "format_version": 1},  # not a string: refused, not a traceback
])
def test_a_format_missing_from_the_registry_cannot_be_checked(capsys, tmp_path, content):
    path = tmp_path / "x.json"
    path.write_text(json.dumps(content))
    code = main(["check", str(path)])
    out, err = capsys.readouterr()
    shown = json.dumps(content["format"], ensure_ascii=False)
    assert code == 2 and out == ""
    assert err == (f"rdp-verify: error: {path} is a JSON object, not an rdp_verify certificate or report (its format "
                   f"{shown} is not one of them; known formats: {', '.join(names())})\n")
