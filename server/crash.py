"""Internal errors: an uncaught exception is a bug in Margin, never a failed check.

The user sees one line on stderr saying so and where the traceback was saved
(``--debug`` prints it instead), and the process exits 2, the code for "the
run could not be done", so CI never confuses a crash with a wrong number
(exit 1).  This module imports only the standard library, so it works even
when the rest of Margin cannot be imported.
"""

from __future__ import annotations

import os
import sys
import time

#: Where bugs are reported.
ISSUES_URL = "https://github.com/margin-check/margin/issues"
#: The exit code of an internal error (shared with usage errors: the run could not be done).
INTERNAL_ERROR_EXIT = 2


def save_traceback(error: BaseException) -> str | None:
    """Write the traceback and versions to a new file in the temporary folder; its path, or None."""
    import tempfile  # only after a crash: off every command's start-up path (~2 ms with what they load)
    import traceback

    lines = traceback.format_exception(type(error), error, error.__traceback__)
    header = (
        f"margin internal error at {time.strftime('%Y-%m-%d %H:%M:%S')}\nargv: {sys.argv!r}\npython: {sys.version}\n\n"
    )
    try:
        handle, path = tempfile.mkstemp(prefix="margin-crash-", suffix=".txt")
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(header + "".join(lines))
    except OSError:
        return None
    return path


def report_internal_error(error: BaseException, *, debug: bool = False) -> int:
    """Tell the user about a bug in one line (or the full traceback with ``debug``); the exit code."""
    summary = f"{type(error).__name__}: {error}".splitlines()[0] if str(error) else type(error).__name__
    if debug:
        import traceback

        traceback.print_exception(type(error), error, error.__traceback__, file=sys.stderr)
        print(f"margin: internal error (a bug in Margin, please report it at {ISSUES_URL}): {summary}", file=sys.stderr)
        return INTERNAL_ERROR_EXIT
    saved = save_traceback(error)
    where = f"traceback saved to {saved}" if saved else "the traceback could not be saved"
    print(
        f"margin: internal error (a bug in Margin, please report it at {ISSUES_URL}): {summary}; "
        f"{where}; run with --debug to print it",
        file=sys.stderr,
    )
    return INTERNAL_ERROR_EXIT
