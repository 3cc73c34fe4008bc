"""User-facing errors: the CLI prints their message and exits 2, never a traceback."""


class UserError(Exception):
    """Bad input from the person running armbench (a flag, a file, a missing key)."""
