"""Loopback servers for tests: an ASGI app with uvicorn (`serve`), an OpenAI-style model provider
(`openai_endpoint`), each in a background thread."""
from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import uvicorn


@contextlib.contextmanager
def serve(app, port: int = 0) -> Iterator[str]:
    """Yield the base URL (http://127.0.0.1:<port>); port 0 picks a free one."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


REPLY = {"id": "r", "object": "chat.completion", "created": 1, "model": "loopback",
         "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ANSWER: 42"}}],
         "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}}


@dataclass
class Endpoint:
    url: str  # the API base, .../v1
    statuses: list[int] = field(default_factory=list)  # what each request was answered with
    bodies: list[dict[str, Any]] = field(default_factory=list)  # each request's body


@contextlib.contextmanager
def openai_endpoint(*statuses: int, reply: dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]] = REPLY
                    ) -> Iterator[Endpoint]:
    """A chat-completions endpoint answering each request with the next of `statuses` (the last
    one from then on; default 200): `reply` on 200 (or what `reply(request body)` makes of the
    request: a scripted model), else an error body saying the status (and `Retry-After: 0` on a 429)."""
    endpoint = Endpoint("")
    answers = statuses or (200,)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            endpoint.bodies.append(request)
            status = answers[min(len(endpoint.statuses), len(answers) - 1)]
            endpoint.statuses.append(status)
            answer = reply(request) if callable(reply) else reply
            body = json.dumps(answer if status == 200 else
                              {"error": {"message": f"the provider says {status}", "type": "error"}}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            if status == 429:
                self.send_header("Retry-After", "0")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint.url = f"http://127.0.0.1:{server.server_port}/v1"
    try:
        yield endpoint
    finally:
        server.shutdown()
