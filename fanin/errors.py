"""The one error type users see: a single line saying what was wrong and what to do."""


class FaninError(Exception):
    """Bad input or a broken file. The CLI prints it as one line and exits 2, no traceback."""
