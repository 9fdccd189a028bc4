"""Edges of a folder of ranks' refusals (``ranks._refuse_unlisted_ranks``, ``ranks._gz_twins``): which sibling an
unreadable folder is named after, and the order of several traces beside their gzip copies (mutation audit mut65b).
On hta's sampled_rank-0 / -1 traces (ranks 0 and 1)."""

from __future__ import annotations

import errno
import gzip
import os
import re
import shutil

import pytest
from test_ranks import KINETO, _refusing

from msprof_compare import api
from msprof_compare.errors import ProfileError
from msprof_compare.loaders import ranks


def test_an_unreadable_folder_is_named_after_its_first_sibling_of_that_shape(tmp_path, monkeypatch):
    """node0_gpu0/ (rank 0), node0_gpu1/ unreadable, node0_gpu2/ (rank 1): the hint names the first sibling of its
    shape by name, node0_gpu0, as for two siblings."""
    base = tmp_path / "base"
    for name, rank in (("node0_gpu0", 0), ("node0_gpu1", 1), ("node0_gpu2", 1)):
        (base / name).mkdir(parents=True)
        shutil.copy(KINETO / f"sampled_rank-{rank}.json.gz", base / name / "t.pt.trace.json.gz")
    lost = base / "node0_gpu1"
    _refusing(monkeypatch, lost)
    with pytest.raises(ProfileError) as err:
        ranks.rank_inputs(str(base))
    assert (err.value.path, err.value.message, err.value.hint) == (
        str(lost), "cannot list directory: Permission denied",
        "its name is rank folder node0_gpu0's but for its digits, so it may hold a rank's profile: make it readable "
        "(chmod u+r), or move it out of the folder")


def test_several_traces_beside_their_gzip_copies_are_named_in_name_order(tmp_path):
    """Four copies of rank 0's trace, each beside its gzip copy (a, b, c, d): rank 0 held 8 times, the twins said
    in name order (the first three, then the count), then the usual hint."""
    job = tmp_path / "job"
    job.mkdir()
    raw = gzip.decompress((KINETO / "sampled_rank-0.json.gz").read_bytes())
    for stem in "dbca":  # written out of order
        (job / f"{stem}.pt.trace.json").write_bytes(raw)
        shutil.copy(KINETO / "sampled_rank-0.json.gz", job / f"{stem}.pt.trace.json.gz")
    twins = "; ".join(f"{s}.pt.trace.json.gz looks like {s}.pt.trace.json compressed" for s in "abc") + \
        "; ... (4 in all)"
    with pytest.raises(ProfileError, match=re.escape(f"({twins}; keep one profile per rank in the folder;")):
        api.ranks(job)


def test_a_rank_folder_named_as_a_trace_is_no_gzip_twin(tmp_path):
    """A rank's folder named r0.pt.trace.json (holding rank 0's trace) beside r0.pt.trace.json.gz (rank 0 too):
    rank 0 held twice, with the usual hint; by name alone the file would look like the folder compressed, but a
    folder is no trace to compress."""
    job = tmp_path / "job"
    (job / "r0.pt.trace.json").mkdir(parents=True)
    shutil.copy(KINETO / "sampled_rank-0.json.gz", job / "r0.pt.trace.json" / "t.pt.trace.json.gz")
    shutil.copy(KINETO / "sampled_rank-0.json.gz", job / "r0.pt.trace.json.gz")
    with pytest.raises(ProfileError) as err:
        api.ranks(job)
    assert err.value.message.startswith("holds rank 0 twice, by name: r0.pt.trace.json")
    assert err.value.hint.startswith("keep one profile per rank in the folder;")


#: tracelens' xdit_flux.1 rank 0 trace: another run's rank 0 (distributedInfo.rank 0 in its head)
XDIT = KINETO.parents[3] / "tracelens" / "tests" / "traces" / "inference" / "xdit_flux.1" / "capture_traces" / \
    "capture_trace_rank_0.json.gz"


@pytest.mark.skipif(not XDIT.is_file(), reason="shared samples absent")
def test_a_gzip_twin_by_name_of_another_size_is_no_copy(tmp_path):
    """r0.pt.trace.json (hta's sampled rank 0) beside r0.pt.trace.json.gz holding another run's rank 0 (tracelens'
    xdit_flux.1) was said to be its copy ("looks like r0.pt.trace.json compressed: keep one of the two", by name
    alone), bidding the user drop either run: the gzip trailer's size (ISIZE) tells them apart, four bytes read, so
    the usual hint is given. A gzip copy of the very bytes is still named, and one a byte longer is not."""
    job = tmp_path / "job"
    job.mkdir()
    raw = gzip.decompress((KINETO / "sampled_rank-0.json.gz").read_bytes())
    (job / "r0.pt.trace.json").write_bytes(raw)
    shutil.copy(XDIT, job / "r0.pt.trace.json.gz")
    assert len(gzip.decompress(XDIT.read_bytes())) != len(raw)
    usual = "keep one profile per rank in the folder; a profiler schedule's cycles"
    with pytest.raises(ProfileError) as err:
        api.ranks(job)
    assert err.value.message == "holds rank 0 twice, by name: r0.pt.trace.json, r0.pt.trace.json.gz"
    assert err.value.hint.startswith(usual)
    (job / "r0.pt.trace.json.gz").write_bytes(gzip.compress(raw + b"\n"))
    with pytest.raises(ProfileError) as err:
        api.ranks(job)
    assert err.value.hint.startswith(usual)
    (job / "r0.pt.trace.json.gz").write_bytes(gzip.compress(raw))
    with pytest.raises(ProfileError) as err:
        api.ranks(job)
    assert err.value.hint == "r0.pt.trace.json.gz looks like r0.pt.trace.json compressed: keep one of the two"


def test_a_gzip_twin_is_told_by_its_trailer_alone(tmp_path):
    """``_inflates_to`` (mutation audit mut66b): hta's sampled rank 0 gzip against its own inflated bytes is a copy;
    against no file, a file that is no gzip (its last four bytes the trace's size though), or a gzip head with a
    size but too short to hold a gzip member (18 bytes at least), none. ISIZE is the size modulo 2**32: a sparse
    trace of 4 GiB + 10 bytes beside a gzip of 10 bytes is that size to the trailer (no 4 GiB copy on disk)."""
    gz = tmp_path / "t.json.gz"
    shutil.copy(KINETO / "sampled_rank-0.json.gz", gz)
    plain = tmp_path / "t.json"
    plain.write_bytes(gzip.decompress(gz.read_bytes()))
    assert ranks._inflates_to(str(gz), str(plain))
    assert not ranks._inflates_to(str(gz), str(tmp_path / "gone.json"))
    size = plain.stat().st_size.to_bytes(4, "little")
    (tmp_path / "not.gz").write_bytes(plain.read_bytes()[:100] + size)
    assert not ranks._inflates_to(str(tmp_path / "not.gz"), str(plain))
    (tmp_path / "short.gz").write_bytes(b"\x1f\x8b" + size)
    assert not ranks._inflates_to(str(tmp_path / "short.gz"), str(plain))
    (tmp_path / "ten.gz").write_bytes(gzip.compress(b"0123456789"))
    with open(tmp_path / "huge.json", "wb") as fh:
        fh.truncate(2**32 + 10)
    assert ranks._inflates_to(str(tmp_path / "ten.gz"), str(tmp_path / "huge.json"))


@pytest.mark.parametrize(("code", "words", "fix"), [
    (errno.EIO, "Input/output error", "check the disk or mount it is on, where the read failed"),
    (errno.ELOOP, "Too many levels of symbolic links",
     "mend the symbolic link in its path, which leads round in a loop"),
    (errno.ENAMETOOLONG, "File name too long", "move it to a shorter path: this one is longer than the system allows"),
    (errno.ENOMEM, "Cannot allocate memory", "clear what keeps it from being listed (Cannot allocate memory)"),
])
def test_a_folder_unlisted_for_another_reason_than_permission_gets_no_chmod(tmp_path, monkeypatch, code, words, fix):
    """node0_gpu1/ beside node0_gpu0/ whose listing fails for a reason other than permission (an I/O error, a
    link loop, a path too long; simulated, as no test machine can make them): the hint says what to do about
    that, where it bade "make it readable (chmod u+r)", which cannot help."""
    base = tmp_path / "base"
    for name in ("node0_gpu0", "node0_gpu1"):
        (base / name).mkdir(parents=True)
    shutil.copy(KINETO / "sampled_rank-0.json.gz", base / "node0_gpu0" / "t.pt.trace.json.gz")
    lost = base / "node0_gpu1"
    _failing(monkeypatch, lost, code, words)
    with pytest.raises(ProfileError) as err:
        ranks.rank_inputs(str(base))
    assert (err.value.path, err.value.message, err.value.hint) == (
        str(lost), f"cannot list directory: {words}",
        f"its name is rank folder node0_gpu0's but for its digits, so it may hold a rank's profile: {fix}, or move "
        "it out of the folder")


def test_a_folder_of_ranks_unlisted_by_an_io_error_says_so(tmp_path, monkeypatch):
    """A folder of ranks whose own listing fails with EIO (simulated): named with what to do about an I/O error,
    where it had no hint (a refused permission gets its chmod, as before)."""
    base = tmp_path / "base"
    base.mkdir()
    _failing(monkeypatch, base, errno.EIO, "Input/output error")
    with pytest.raises(ProfileError) as err:
        api.ranks(base)
    assert (err.value.path, err.value.message, err.value.hint) == (
        str(base), "cannot list directory: Input/output error",
        "check the disk or mount it is on, where the read failed")


def _failing(monkeypatch, path, code, words):
    """``os.listdir`` failing on ``path`` with OSError ``code`` (``words`` its strerror)."""
    real = os.listdir

    def listdir(p="."):
        if os.fspath(p) == str(path):
            raise OSError(code, words, os.fspath(p))
        return real(p)

    monkeypatch.setattr(os, "listdir", listdir)
