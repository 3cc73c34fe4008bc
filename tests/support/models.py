"""The engine plays models a plan resolved (armbench.api): tests resolve theirs here, by name."""
from __future__ import annotations

from armbench.engine import runner
from armbench.models import get_model
from armbench.models.client import ModelCaller


def caller(model: str) -> ModelCaller:
    """One client of the model `model` names, as a run set's runs each get one."""
    return get_model(model).client()


async def run_set(question_sets, config, store, **options) -> runner.RunSetResult:
    """`runner.run_set` with config.model resolved, as `armbench.run` resolves it once per run set."""
    return await runner.run_set(question_sets, config, store, model=get_model(config.model), **options)
