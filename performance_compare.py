#!/usr/bin/env python3
"""Script face of msprof-compare: ``python performance_compare.py BASE COMPARISON [options]``.

Same options as ``msprof-analyze compare`` (base profile first, comparison
second, as in the original script). Needs the package installed
(``pip install .``) or this file run from the repository root.
"""

import os
import signal
import sys


def _interrupted(_signum, _frame):
    """Ctrl-C while the package itself is imported: the entry point's handler is not in place yet."""
    sys.stderr.write("error: interrupted\n")
    sys.stderr.flush()
    os._exit(130)


_interrupted.msprof_quiet = True  # the entry point hands Ctrl-C back to the CLI as from the default handler

if __name__ == "__main__":
    try:
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # an ignored Ctrl-C stays ignored
            signal.signal(signal.SIGINT, _interrupted)
    except ValueError:  # not the main thread (runpy from a thread): leave signals alone
        pass
    from msprof_compare.entry import script_main  # light: Ctrl-C while the rest loads is handled there

    sys.exit(script_main())
