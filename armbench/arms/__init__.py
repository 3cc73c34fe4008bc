"""Arms: the tool sets an agent gets. browsing = browser + python + http_get; tooled = browsing +
the domain's typed tools. `ArmEnvironment` builds them for each run."""
from armbench.arms.environment import ARM_NAMES, ArmEnvironment

__all__ = ["ARM_NAMES", "ArmEnvironment"]
