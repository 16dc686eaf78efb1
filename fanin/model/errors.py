"""The one error type users see: a single line saying what was wrong and what to do."""


class FaninError(Exception):
    """Bad input or a broken file. The CLI prints it as one line and exits `exit_code`, no traceback."""

    exit_code = 2  # bad input; subclasses for what the environment did wrong use 3 (could not run)


class EnvironmentFault(FaninError):
    """The input was fine, but something the run needs failed: a network service, an install, a server."""

    exit_code = 3
