"""Names from a profile cannot drive the user's terminal (escape sequences, CR, bidi overrides)."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd

from msprof_compare.report.summary_console import render_waterfall
from msprof_compare.textsafe import term_safe

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "sample_data"
#: What a terminal acts on, line feeds aside.
DRIVING = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
HOSTILE = "aten::\x1b[31mRED\x1b[0m\x1b]0;TITLE\x07\x1b[2J\rOVER\u202eevil\u202c\nNEXT"


def test_term_safe_escapes_what_drives_a_terminal() -> None:
    assert term_safe("a\x1b[2Jb\rc\u202ed\x85e\tf") == "a\\x1b[2Jb\\rc\\u202ed\\x85e\\tf"
    assert term_safe("one\ntwo") == "one\\ntwo"
    assert term_safe("one\n\x1btwo", keep_newlines=True) == "one\n\\x1btwo"
    assert term_safe("aten::加法 é") == "aten::加法 é"  # letters of any script stay
    assert term_safe("x\udce8y") == "x\\xe8y"  # a file name byte that is no UTF-8


def test_lone_surrogates_that_are_no_file_name_byte() -> None:
    """A lone surrogate outside U+DC80..U+DCFF (no byte of a file name: text a Python caller passed, e.g. a path
    argument of the API) is escaped as \\uXXXX in the reports and on the terminal, not an error; a name byte
    beside it keeps its \\xNN form only where all of the text allows that."""
    from msprof_compare.textsafe import display

    assert display("run\ud800/t.json") == "run\\ud800/t.json"
    assert term_safe("a\ud800b\udfffc") == "a\\ud800b\\udfffc"
    assert display("x\udce8\ud800") == "x\\udce8\\ud800"
    assert display("x\udce8") == "x\\xe8"


def _hostile_pair(root: Path) -> tuple[Path, Path]:
    """The bundled BERT pair with aten::linear (slower on H100 than on MI300) renamed, on both sides."""
    out = []
    for side in ("h100", "mi300"):
        doc = json.loads(gzip.decompress((SAMPLES / f"bert-small_{side}.json.gz").read_bytes()))
        for e in doc["traceEvents"]:
            if e.get("name") == "aten::linear":
                e["name"] = HOSTILE
        path = root / f"{side}.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        out.append(path)
    return out[0], out[1]


def test_hostile_names_reach_the_console_escaped(tmp_path: Path) -> None:
    base, comp = _hostile_pair(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-c", "from msprof_compare.entry import compare_main; compare_main()", "-d", str(base),
         "-bp", str(comp), "-o", str(tmp_path), "--fail_on_regression", "1"],
        capture_output=True, text=True, encoding="utf-8", timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO), "PYTHONIOENCODING": "utf-8"}, cwd=tmp_path)
    assert proc.returncode == 3, proc.stderr  # H100 after MI300: E2E +12%, the gate names the ops on stderr
    assert "Top Contributors" in proc.stdout
    for stream in (proc.stdout, proc.stderr):
        assert not DRIVING.search(stream), repr(DRIVING.search(stream))
    # the table shows the escaped name (cut at 70 characters), the gate message shows it whole
    assert "aten::\\x1b[31mRED\\x1b[0m\\x1b]0;TITLE\\x07" in proc.stdout
    assert term_safe(HOSTILE) in proc.stderr
    # the workbook keeps the name (its control characters as the format's _xHHHH_ escapes, which Excel reads back)
    api = pd.read_excel(next(tmp_path.glob("performance_comparison_result_*.xlsx")), sheet_name="ApiCompare",
                        header=None)
    cells = [str(v) for v in api.to_numpy().ravel()]
    assert "aten::_x001B_[31mRED_x001B_[0m_x001B_]0;TITLE_x0007__x001B_[2J_x000D_OVER\u202eevil\u202c\nNEXT" in cells


def test_hostile_names_in_log_lines_and_waterfall_steps(caplog: object) -> None:
    frame = pd.DataFrame({"Step": ["Base E2E", "Wait: dp\x1b]0;PWNED\x07\x1b[2K\rFAKE"], "Kind": ["", ""],
                          "Base": [1.0, 0.5], "Comparison": [None, 0.7], "Delta": [None, 0.2],
                          "Cumulative": [1.0, 1.2], "Share": [None, 1.0]})
    text = render_waterfall(frame)
    assert not DRIVING.search(text)
    assert "Wait: dp\\x1b]0;PWNED\\x07\\x1b[2K\\rFAKE" in text
    proc = subprocess.run(
        [sys.executable, "-c", "from msprof_compare.logs import setup_logging\n"
         "setup_logging().warning('no common input shape for: %s', 'aten::x\\x1b[2J\\rY\\nZ')"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=60)
    assert proc.stderr.count("\n") == 1 and not DRIVING.search(proc.stderr)
    assert proc.stderr.rstrip("\n").endswith("no common input shape for: aten::x\\x1b[2J\\rY\\nZ")


def test_module_names_give_way_by_whole_components():
    """``cut_module_columns``: leading components go first, the "/[ BACKWARD ]" marker stays in front, a tail too
    wide alone is cut from its start after the marker, East Asian wide characters count two columns."""
    from msprof_compare.textsafe import cut_module_columns

    bw = "/[ BACKWARD ]/ DistributedDataParallel_0/ AlexNet_0/ Sequential_1/ Linear_0 > aten::mm"
    assert cut_module_columns(bw, len(bw)) == bw
    assert cut_module_columns(bw, len(bw) - 1) == "/[ BACKWARD ]/ .../ AlexNet_0/ Sequential_1/ Linear_0 > aten::mm"
    assert cut_module_columns(bw, 50) == "/[ BACKWARD ]/ .../ Linear_0 > aten::mm"
    fw = "/ DistributedDataParallel_0/ AlexNet_0/ Sequential_1/ Linear_0 > aten::linear"
    assert cut_module_columns(fw, 60) == ".../ AlexNet_0/ Sequential_1/ Linear_0 > aten::linear"
    long = "/[ BACKWARD ]/ Model_0/ " + "x" * 60 + " > aten::mm"
    assert cut_module_columns(long, 50) == "/[ BACKWARD ]..." + long[-34:]
    # under 20 columns beside the marker, the marker gives way too (it would leave 9 of the name's)
    assert cut_module_columns(long, 25) == "..." + long[-22:]
    wide = "/ Model_0/ 模块_0/ Linear_0 > aten::mm"   # the two CJK characters take 4 columns
    assert cut_module_columns(wide, 38) == wide
    assert cut_module_columns(wide, 37) == ".../ 模块_0/ Linear_0 > aten::mm"
    assert cut_module_columns("aten::" + "y" * 80, 30) == "..." + "y" * 27  # not a path: cut from the left
    # a path without a leading "/" gives way by whole components too: its first one went with the second
    bare = "Model_0/ Linear_0/ ReLU_0 > aten::relu"
    assert cut_module_columns(bare, 34) == ".../ Linear_0/ ReLU_0 > aten::relu"
    assert cut_module_columns(bare, 26) == ".../ ReLU_0 > aten::relu"
    # a "/" in the operator is no path component: "aten::a/b" is not cut down to ".../b"
    slash = "/ Model_0/ Linear_0 > aten::a/b"
    assert cut_module_columns(slash, 25) == ".../ Linear_0 > aten::a/b"
    assert cut_module_columns(slash, 20) == "..." + slash[-17:]


def test_short_list_escapes_for_the_log_only_and_counts_only_past_its_limit() -> None:
    """``short_list`` by hand: exactly ``limit`` items are all shown, with no count; one more is counted (with
    separators); escaped (ESC as ``\\x1b``) for a log line, kept as written for a text that also goes to a sheet or
    the JSON (``escape=False``: an operator name with a control character stays the sheet's name)."""
    from msprof_compare.textsafe import short_list

    assert short_list(["a", "b", "c"], 3) == "a, b, c"
    assert short_list(["a", "b", "c", "d"], 3) == "a, b, c, ... (4 in all)"
    assert short_list([str(i) for i in range(1200)], 2) == "0, 1, ... (1,200 in all)"
    assert short_list(["x\x1b[31m", "y"], 2) == "x\\x1b[31m, y"
    assert short_list(["x\x1b[31m", "y"], 2, escape=False) == "x\x1b[31m, y"
