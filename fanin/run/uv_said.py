"""What a failed uv command said, in one line: its `error:` line and the last `cause:` under it.

uv ends a failure with `hint:` lines (why a package was included, a flag to try): the last lines of its output,
which is what a one-line report used to show, so the cause itself (a certificate refused, a version that does
not exist) was lost. Standard library only: noxfile.py loads this file on its own, before the harness exists.
"""

from __future__ import annotations


def said(output: str) -> str:
    """`error: <what failed>: <the last cause>`, or the last line that is not a hint; empty for no output."""
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    errors = [line for line in lines if line.lower().startswith("error:")]
    causes = [line.removeprefix("cause:").strip() for line in lines if line.startswith("cause:")]
    if errors:
        return f"{errors[0]}: {causes[-1]}" if causes else errors[0]
    told = [line for line in lines if not line.startswith("hint:")]
    return (told or lines or [""])[-1]
