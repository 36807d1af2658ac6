"""Training controls where the table's simulated devices live: on the table's own loop, in the
table's process (`daemon.training`; the API's `/api/training` routes ask for them through the
facade, `TableFacade.training`)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from daemon.contract.facade import training_args
from daemon.training import Training


async def training_call(table: Any, name: str, args: list[Any]) -> Any:
    """A training control (`daemon.training.Training`) on `table`, where its simulated devices
    live: `describe()` or `control(asked, actor, role)`. None when the table's devices are not
    all simulated (no training mode)."""
    if not training_args(name, args):
        raise ValueError(f"training: no control {name} with these arguments")
    if name == "describe":
        call: Callable[[Training], Any] = lambda training: training.describe()  # noqa: E731
    else:
        call = lambda training: training.control(*args)  # noqa: E731
    training = Training.of(table)
    if training is None:
        return None
    result = call(training)
    return await result if inspect.isawaitable(result) else result
