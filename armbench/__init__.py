"""armbench: does a typed query tool help an LLM agent, compared with browsing the same data?

`armbench.run(...)`, `armbench.report(...)` and `armbench.synthesize(...)` are `bench run`,
`bench report` and `bench synthesize` for Python (armbench/api.py); `armbench.UserError` is what
they raise for input a user can fix.
"""
from armbench.api import Report, RunResult, report, run, synthesize
from armbench.errors import UserError

__all__ = ["Report", "RunResult", "UserError", "report", "run", "synthesize"]
