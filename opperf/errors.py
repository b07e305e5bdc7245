"""The one exception type users see: a bad request, named with its fix."""


class OpperfError(ValueError):
    """A request opperf cannot serve: unknown operator, malformed input, unavailable device, ...

    The message names the offending value and how to fix it; the CLI prints it as ``error: ...``.
    """
