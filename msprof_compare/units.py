"""The units of a rank-by-rank compare: a rank (``int``) where the folders hold one profile per rank, else a
``RankCycle``: a profiler schedule with ``repeat`` > 1 (or 0) writes one profile per rank and cycle into one folder,
and two runs profiled with the same schedule hold the same steps in their k-th cycles. Light (no pandas): the
package exports ``RankCycle`` and errors name their unit with ``unit_label``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

#: The largest rank id: torch.distributed's rank is a C int and HCCL's a uint32 whose 0xFFFFFFFF means "no peer";
#: a larger id (a damaged file or name) read as a rank made a world of "at least 3000000001" ranks, and the ranks
#: overview workbook showed rank 10**20 as 1e+20 (a float).
MAX_RANK = 2**31 - 1


class RankCycle(NamedTuple):
    """Cycle ``cycle`` (1-based, in recorded order) of rank ``rank``; ``rank`` None for a single device's cycles."""

    rank: int | None
    cycle: int


#: A unit of a rank-by-rank compare.
Unit = int | RankCycle


def unit_label(unit: Unit) -> str:
    """``rank 1`` / ``rank 1 cycle 2`` / ``cycle 2``: a unit as a message names it."""
    if not isinstance(unit, RankCycle):
        return f"rank {unit}"
    return f"cycle {unit.cycle}" if unit.rank is None else f"rank {unit.rank} cycle {unit.cycle}"


def unit_noun(unit: Unit) -> str:
    """What a unit is, as a line about several names them: "rank", "rank cycle", "cycle" (a single device's)."""
    if not isinstance(unit, RankCycle):
        return "rank"
    return "cycle" if unit.rank is None else "rank cycle"


def unit_stem(unit: Unit) -> str:
    """``rank1`` / ``rank1_cycle2`` / ``cycle2``: a unit as its report's file name names it."""
    return unit_label(unit).replace(" cycle ", "_cycle").replace(" ", "")


def unit_order(unit: Unit) -> tuple[int, int]:
    """The order of units: cycle by cycle, the ranks in rank order within a cycle (a rank alone: its rank)."""
    if not isinstance(unit, RankCycle):
        return 0, unit
    return unit.cycle, -1 if unit.rank is None else unit.rank


def unit_rank(unit: Unit) -> int | None:
    """The rank of a unit (None for a single device's cycle)."""
    return unit.rank if isinstance(unit, RankCycle) else unit


def job_noun(units: Iterable[Unit]) -> str:
    """"Cycles" where the units are a single device's cycles (no rank to name the job by), else "Ranks": the
    console's table title, the job overview's line, sheet and file name."""
    listed = list(units)
    return "Cycles" if listed and all(isinstance(u, RankCycle) and u.rank is None for u in listed) else "Ranks"


def named_units(units: Iterable[Unit]) -> str:
    """``ranks 0, 2`` (ranks alone) / ``rank 0 cycle 2, rank 1 cycle 2`` / ``cycles 1, 3``: units as a message
    names them."""
    listed = list(units)
    if all(not isinstance(u, RankCycle) for u in listed):
        return f"rank{'s' if len(listed) > 1 else ''} {', '.join(map(str, listed))}"
    if all(isinstance(u, RankCycle) and u.rank is None for u in listed):
        return f"cycle{'s' if len(listed) > 1 else ''} {', '.join(str(u.cycle) for u in listed)}"
    return ", ".join(unit_label(u) for u in listed)
