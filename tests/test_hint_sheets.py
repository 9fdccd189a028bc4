"""Two hints send the user to a sheet's Operator Name to copy an op's name from: ``--op_name_map``'s unused-key
warning, said before the run pairs (``optree.names_sheet(opts)``), and ``--transparent_op``'s refusal, once it
has paired (``optree._names_sheet``). One rule decides both (``optree.names_sheet``); a run given a misspelt name
of each gets both, and they must not send the user to two sheets, nor to one the run does not write."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from msprof_compare.api import compare
from msprof_compare.errors import ProfileError

DATA = Path(__file__).parent / "data" / "kineto"
REPO = Path(__file__).resolve().parents[1]
#: AlexNet on H200 (its nn.Module annotations pair as modules): the default run writes ModuleCompare, no
#: OperatorCompare
H200 = DATA / "alexnet_h200_rank0.1796036920927925468.pt.trace.json.gz"
#: the MI300 RCCL excerpt: two top-level ops and no module, so its operator comparison writes OperatorCompare
MI300 = DATA / "mi300_rccl_generic_excerpt.pt.trace.json"
BERT = tuple(REPO / "sample_data" / f"bert-small_{gpu}.json.gz" for gpu in ("h100", "mi300"))


@pytest.mark.parametrize(("pair", "kw", "mapped", "refused"), [
    ((H200, H200), {}, "OperatorCompare or ModuleCompare", "ModuleCompare"),
    # no module on either side: the warning names the one sheet module matching cannot write (957faf4a)
    ((MI300, MI300), {"enable_operator_compare": True}, "OperatorCompare", "OperatorCompare"),
    (BERT, {"disable_module": True}, "OperatorCompare", "OperatorCompare"),
    (BERT, {"enable_memory_compare": True}, "MemoryCompare", "MemoryCompare"),
])
def test_both_hints_of_one_run_name_the_sheet_it_writes(caplog: pytest.LogCaptureFixture, pair: tuple[Path, Path],
                                                        kw: dict, mapped: str, refused: str) -> None:
    """The map's warning, said before pairing, may offer both operator sheets where module matching decides; the
    refusal, after it, names the one written, which is among the warning's. The run without the misspelt names
    writes the sheet named, and no other of the operator sheets."""
    base, comparison = (str(p) for p in pair)
    with caplog.at_level(logging.WARNING, logger="msprof-analyze"), pytest.raises(ProfileError) as info:
        compare(base, comparison, op_name_map={"aten::lineer": "aten::mm"}, transparent_op="aten::lineer", **kw)
    assert [m.rpartition("copy them from the ")[2] for m in caplog.messages if m.startswith("op_name_map:")] == [
        f"{mapped} sheet)."]
    assert f"as the {refused} sheet's Operator Name gives it" in str(info.value)
    assert refused in mapped.split(" or ")
    written = compare(base, comparison, **kw).sheet_names
    assert refused in written
    assert not ({"OperatorCompare", "ModuleCompare"} - {refused}) & set(written)
