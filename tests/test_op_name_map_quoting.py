"""``--op_name_map``'s warnings quote its names as Python literals on the command line too, where the other CLI
messages quote a value for a POSIX shell (``textsafe.shell_word``): the names are keys and values of the dict
literal the option takes, and a name quoted as the warning quotes it pastes back into that literal as it is, while
the shell's quoting of a name holding a quote mark (``'it'"'"'s'``) is no Python string there. Bundled BERT pair
(sample_data/, the H100 trace against the MI300X one)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from msprof_compare import cli
from msprof_compare.textsafe import shell_word

REPO = Path(__file__).resolve().parents[1]


def test_the_map_warnings_quote_names_as_the_literal_takes_them(capsys: pytest.CaptureFixture,
                                                                  tmp_path: Path) -> None:
    key = 'it\'s "x" \\'  # both quote marks and a backslash: each quoting writes it otherwise
    # no op is named key; aten::linear (BERT's linear layers) is renamed again
    mapping = repr({key: "aten::linear", "aten::linear": "aten::addmm"})
    base, comparison = (str(REPO / "sample_data" / f"bert-small_{gpu}.json.gz") for gpu in ("h100", "mi300"))
    with pytest.raises(SystemExit) as info:
        cli.analyze_main(["compare", "-bp", base, "-d", comparison, "-o", str(tmp_path), "--enable_operator_compare",
                          "--op_name_map", mapping])
    err = capsys.readouterr().err
    assert info.value.code == 0, err
    lines = [line.split("] ", 1)[1] for line in err.splitlines() if "--op_name_map" in line]
    unused = next(line for line in lines if "names no operator" in line)
    crossed = next(line for line in lines if "renames once" in line)
    quoted = unused.removeprefix("--op_name_map: ").split(" names no operator")[0]
    assert quoted == r"""'it\'s "x" \\'"""  # Python's quoting, written out by hand
    # pasted into the option's literal, the name is the key given; the shell's form there is another string
    assert ast.literal_eval("{" + quoted + ": 'y'}") == {key: "y"}
    assert shell_word(key) not in err
    assert crossed.startswith(f"--op_name_map renames once, on both sides: {quoted} becomes 'aten::linear' "
                              "and 'aten::linear' becomes 'aten::addmm'")
