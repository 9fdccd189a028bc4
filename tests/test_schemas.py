"""The JSON reports' schemas as package data: ``msprof_compare.schema(name)`` gives a pip user (no checkout, so no
docs/) the schema a document's ``$schema`` URN names, and the documents the tool writes hold the keys it lists.
The wheel's contents are checked in test_packaging.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import msprof_compare
from msprof_compare import UsageError
from tests.test_json_report import _strict_loads, validate

SCHEMAS = Path(__file__).resolve().parents[1] / "msprof_compare" / "schemas"
KINETO = Path(__file__).resolve().parent / "data" / "kineto"
#: Two real Kineto excerpts (tests/data/kineto/README.md): an H100 Timesformer window against a legacy ResNet50 one
BASE, COMP = KINETO / "h100_timesformer_excerpt.pt.trace.json", KINETO / "legacy_resnet50_excerpt.pt.trace.json"


@pytest.mark.parametrize(("name", "urn"), [("result", "urn:msprof-compare:result-schema:3"),
                                           ("ranks", "urn:msprof-compare:ranks-schema:2")])
def test_schema_is_the_file_the_package_holds(name: str, urn: str) -> None:
    """What the file holds, parsed; its ``$id`` the URN the documents' ``$schema`` names (a contract); a new dict
    on each call, so a caller that edits one (a stricter local copy) does not change the next."""
    got = msprof_compare.schema(name)
    assert got == json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    assert got["$id"] == urn and got["properties"]["$schema"]["const"] == urn
    got["required"].clear()
    assert msprof_compare.schema(name)["required"]


@pytest.mark.parametrize("name", ["Result", "result.schema.json", "rank", "", None, 3])
def test_an_unknown_schema_is_refused_naming_the_known_ones(name: object) -> None:
    with pytest.raises(UsageError) as err:
        msprof_compare.schema(name)  # type: ignore[arg-type]
    assert str(err.value) == f"schema: unknown schema {name!r}; the known ones are 'result' and 'ranks'"


def test_the_schemas_are_in_the_package_alone() -> None:
    """One copy: the docs/ copies moved into the package, where a checkout and an install read the same file."""
    root = SCHEMAS.parents[1]
    assert sorted(p.name for p in SCHEMAS.iterdir()) == ["ranks.schema.json", "result.schema.json"]
    assert sorted(p.relative_to(root).as_posix() for p in root.glob("docs/**/*.schema.json")) == []


def test_real_documents_hold_the_keys_the_schemas_list(tmp_path: Path) -> None:
    """A JSON report of two real Kineto excerpts and the job overview of it as rank 0 hold, at top level, the keys
    ``schema()`` lists (every key the result schema names is required; the overview's straggler keys are
    written only where a straggler is found) and validate against it."""
    result = msprof_compare.compare(BASE, COMP, disable_module=True)
    doc = _strict_loads(Path(result.to_json(str(tmp_path / "run.json"))).read_text(encoding="utf-8"))
    schema = msprof_compare.schema("result")
    assert doc["$schema"] == schema["$id"]
    assert list(doc) == schema["required"] == list(schema["properties"])
    assert schema["additionalProperties"] is False and validate(doc, schema) == []

    overview = msprof_compare.ranks_overview([(0, result)], reports={0: tmp_path / "run.json"})
    ranks = msprof_compare.schema("ranks")
    assert overview["$schema"] == ranks["$id"]
    assert set(ranks["required"]) <= set(overview) <= set(ranks["properties"])
    assert set(ranks["properties"]) - set(ranks["required"]) == {"straggler", "straggler_line"}
    assert ranks["additionalProperties"] is False and validate(overview, ranks) == []


def test_the_readme_command_writes_the_result_schema(tmp_path: Path) -> None:
    """The README's one-liner for a pip user, run as it stands (its ``> FILE`` as the redirect it is), writes the
    schema the file holds."""
    import os
    import re
    import shlex
    import subprocess
    import sys

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    (line,) = re.findall(r"^python -c .*msprof_compare\.schema.*$", readme, flags=re.M)
    *command, redirect, target = shlex.split(line)
    assert command[0] == "python" and redirect == ">"
    env = {**os.environ, "PYTHONPATH": str(SCHEMAS.parents[1])}
    with open(tmp_path / target, "w", encoding="utf-8") as out:
        run = subprocess.run([sys.executable, *command[1:]], stdout=out, stderr=subprocess.PIPE, text=True,
                             cwd=tmp_path, env=env, timeout=60)
    assert run.returncode == 0, run.stderr
    assert json.loads((tmp_path / target).read_text(encoding="utf-8")) == json.loads(
        (SCHEMAS / "result.schema.json").read_text(encoding="utf-8"))
