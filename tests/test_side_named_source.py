"""One way for a message to name its side (sides72): ``errors.side_named`` writes the parenthesis, " (base
side)", " (comparison side: WHY)", so a new message cannot put the side elsewhere or spell it another way. About
30 messages wrote it by hand beside ``model.sided`` and ``ProfileError.closing``, which wrote it again.

The source check reads the package's syntax trees: a side's parenthesis written by hand is a string that opens
"(" right before the side (a ``%s`` whose argument is a side, an f-string's ``{side}``), a side passed bare to a
logging call, or the words "(base side" / "(comparison side" / "(both sides" in a literal."""

from __future__ import annotations

import ast
import pickle
import re
from pathlib import Path

import pytest

import msprof_compare
from msprof_compare.errors import OutOfMemory, StepError, on_side, side_named
from msprof_compare.model import sided

PACKAGE = Path(msprof_compare.__file__).parent
_LOG_CALLS = {"debug", "info", "warning", "error", "critical", "exception", "log"}
_CONVERSION = re.compile(r"%[-#0 +]*\d*(?:\.\d+)?[diouxXeEfFgGcrsa]")
_WORDS = re.compile(r"\((base side|comparison side|both sides)\b")


def _is_side(node: ast.AST) -> bool:
    """An expression that holds a side's words: a name or attribute ``side``, or a call of ``X.side(...)``
    (``RunContext.side``)."""
    if isinstance(node, ast.IfExp):
        return _is_side(node.body) or _is_side(node.orelse)
    if isinstance(node, ast.Name):
        return node.id == "side"
    if isinstance(node, ast.Attribute):
        return node.attr == "side"
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "side"


def _hand_written(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, form) of each side's parenthesis ``tree`` writes by hand; docstrings may quote them."""
    docs = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
                and _WORDS.search(node.value)):
            found.append((node.lineno, f"the words {_WORDS.search(node.value).group(0)!r} in a literal"))
        elif isinstance(node, ast.JoinedStr):
            for before, value, after in zip(node.values, node.values[1:], node.values[2:] + [None], strict=False):
                if (isinstance(before, ast.Constant) and str(before.value).endswith("(")
                        and isinstance(value, ast.FormattedValue) and _is_side(value.value)
                        and isinstance(after, ast.Constant) and str(after.value)[:1] in "):"):
                    found.append((value.lineno, "an f-string's '({side}'"))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in _LOG_CALLS):
            args = node.args[1:] if node.func.attr == "log" else node.args
            if not args or not isinstance(args[0], ast.Constant) or not isinstance(args[0].value, str):
                continue
            pieces = _CONVERSION.split(args[0].value.replace("%%", ""))
            for before, arg in zip(pieces, args[1:], strict=False):
                if _is_side(arg):
                    found.append((arg.lineno, "a side passed bare to a log call" if not before.endswith("(")
                                  else "a '(%s' whose argument is a side"))
    return found


def test_no_message_writes_its_side_by_hand():
    """Every line naming its side goes through ``side_named``: none of the package's modules writes the
    parenthesis itself. Before sides72 this listed the comparators' ~30 lines (kernels, communication, optree,
    overall, memory, modules, the GPU breakdown, the gate, the ranks' loader)."""
    found = [f"{path.relative_to(PACKAGE)}:{line}: {what}"
             for path in sorted(PACKAGE.rglob("*.py"))
             for line, what in _hand_written(ast.parse(path.read_text(encoding="utf-8")))]
    assert found == []


def test_the_check_finds_each_hand_written_form():
    """The check above can fail: each form a message used before sides72 is found (it would pass on any tree if
    the check found none)."""
    forms = ['log.warning("%s (%s)", reason, ctx.side(p))',
             'log.log(level, "Can\'t find any torch op in the file: %s (%s)", p.path, ctx.side(p))',
             'log.warning("%s: x%s", p.path, f" ({side})" if side else "")',
             'log.warning("%s: none in step %d (%s)", p.path, step, side)',
             'x = f"no E2E time ({\'both sides\' if one else side})"',
             'x = "no E2E time (comparison side)"',
             'log.info("%s: no memory. %s", p.path, ctx.side(p))']
    assert [len(_hand_written(ast.parse(f))) for f in forms] == [1] * len(forms)
    assert _hand_written(ast.parse('log.warning("%s%s", reason, side_named(ctx.side(p)))')) == []


@pytest.mark.parametrize(("side", "aside", "said"), [
    ("base side", None, " (base side)"),
    ("comparison side", "no kernel_details.csv", " (comparison side: no kernel_details.csv)"),
    (None, "the file was probably cut short", " (the file was probably cut short)"),
    ("", "", ""),
    (None, None, ""),
])
def test_side_named_forms(side, aside, said):
    """The side first, then the aside after ": ", in one parenthesis; the aside alone where no side is known (a
    loader reading one input, the API's profile loaded alone); nothing where neither."""
    assert side_named(side, aside) == said


def test_the_carriers_write_the_same_parenthesis():
    """``model.sided``, ``on_side`` on a StepError and an OutOfMemory: one text each, as before sides72
    (docs/differences.md's examples), and a note survives pickling with its side still to name."""
    note = sided("<trace>: truncated JSON", "the file was probably cut short", "; rerun")
    assert str(note) == "<trace>: truncated JSON (the file was probably cut short); rerun"
    assert note.of_side("base side") == "<trace>: truncated JSON (base side: the file was probably cut short); rerun"
    assert pickle.loads(pickle.dumps(note)).of_side("both sides") == \
        "<trace>: truncated JSON (both sides: the file was probably cut short); rerun"
    assert sided("<f>: The communication.json file is empty.").of_side("comparison side") == \
        "<f>: The communication.json file is empty. (comparison side)"
    with pytest.raises(StepError) as step, on_side("comparison side"):
        raise StepError("<f>: Invalid step id: 9")
    assert str(step.value) == "<f>: Invalid step id: 9 (comparison side)"
    with pytest.raises(OutOfMemory) as oom, on_side("base side"):
        raise OutOfMemory("<f>", "loading it")
    assert str(oom.value) == "<f>: out of memory while loading it (base side)"
