"""What a replica request costs the server, however busy it is: `metered(app, meter)`.

A run's share of a replica (tools/replica_gate.py) is paid in server time. The wait for a reply is
no measure of it: on a busy machine the same request waits behind other runs' requests, and a run
charged for that wait would be held back more, and finish later, the busier the machine, a grade
that depends on the load. So the server measures instead: the replicas' process CPU time, divided
at every moment among the requests in flight (processor sharing: the interpreter serves them in
turns). A request's cost is its part of that CPU time, the same at concurrency 1 and 16 up to how
the interleaved requests' costs are split between them; total cost is exactly the CPU spent on
requests. It is sent only to a client that asks for it (the gate), in the reply head's REPLICA_COST_HEADER.
"""
from __future__ import annotations

import time
from typing import Any

from armbench.types import REPLICA_COST_HEADER, REPLICA_WANT_COST_HEADER


class ServerMeter:
    """One per serving process: every replica in it shares the interpreter, so they share a meter."""

    def __init__(self) -> None:
        self.in_flight = 0
        self.shared_cpu_s = 0.0  # CPU time per in-flight request, added up: a request costs its growth
        self.cpu_s = time.process_time()

    def advance(self) -> None:
        cpu_s = time.process_time()
        if self.in_flight:
            self.shared_cpu_s += (cpu_s - self.cpu_s) / self.in_flight
        self.cpu_s = cpu_s

    def start(self) -> float:
        self.advance()
        self.in_flight += 1
        return self.shared_cpu_s

    def end(self, started: float) -> float:
        """The cost of the request that `start` returned `started` for."""
        self.advance()
        self.in_flight -= 1
        return self.shared_cpu_s - started


def metered(app: Any, meter: ServerMeter) -> Any:
    """The ASGI `app`, answering a request that carries REPLICA_WANT_COST_HEADER with its cost (seconds) in
    REPLICA_COST_HEADER, measured up to the reply's start (a replica builds its body before it starts)."""

    async def metered_app(scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not any(name == REPLICA_WANT_COST_HEADER for name, _ in scope.get("headers", ())):
            await app(scope, receive, send)
            return
        started = meter.start()
        ended = False

        async def send_with_cost(message: dict) -> None:
            nonlocal ended
            if message["type"] == "http.response.start" and not ended:
                ended = True
                cost = f"{meter.end(started):.6f}".encode()
                message = {**message, "headers": [*message.get("headers", ()), (REPLICA_COST_HEADER, cost)]}
            await send(message)

        try:
            await app(scope, receive, send_with_cost)
        finally:
            if not ended:
                meter.end(started)

    return metered_app
