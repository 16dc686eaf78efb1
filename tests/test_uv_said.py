"""A failed uv command reported in one line: the failure and its root cause, not uv's closing hints."""

from __future__ import annotations

from fanin.run.uv_said import said

REFUSED = """\
error: Failed to download `pgserver==0.1.4`
  cause: Failed to fetch: https://files.pythonhosted.org/packages/pgserver-0.1.4.whl
  cause: client error (Connect)
  cause: invalid peer certificate: UnknownIssuer
hint: `pgserver` (v0.1.4) was included because `fanin` (v0.2.0) depends on `pgserver`
hint: Consider enabling use of system TLS certificates with the `--system-certs` command-line flag
"""


def test_the_error_and_its_last_cause_not_the_hints() -> None:
    assert said(REFUSED) == "error: Failed to download `pgserver==0.1.4`: invalid peer certificate: UnknownIssuer"


def test_an_error_without_causes_is_itself() -> None:
    assert said("  × No solution found\nerror: No such version: foo==9\nhint: try another\n") == (
        "error: No such version: foo==9"
    )


def test_without_an_error_line_the_last_line_that_is_not_a_hint() -> None:
    assert (
        said("fanin: error: reference/matrix.toml: bad\nhint: ignore me\n")
        == "fanin: error: reference/matrix.toml: bad"
    )
    assert said("hint: only a hint\n") == "hint: only a hint"
    assert said("") == ""
