"""An SMTP server for the tests (aiosmtpd, PyPI `aiosmtpd`): keeps every message it is handed,
parsed with Python's own `email` package, and shows them over HTTP.

    python smtp.py        prints "listening on <smtp port> <http port>", then serves on 127.0.0.1

- GET /messages lists every message received, oldest first: the envelope (`from`, `to`), the
  headers that matter to the tests, and the plain-text and HTML parts;
- POST /_control {"refuse": N, "code": 451} answers the next N messages with that code (a 4xx
  is a failure the sender may retry, a 5xx one it may not).
"""

import email
import email.policy
import json
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from aiosmtpd.controller import Controller

lock = threading.Lock()
messages = []
refusals = {"refuse": 0, "code": 451}

HEADERS = ["From", "To", "Subject", "Date", "Message-ID", "MIME-Version", "Content-Type",
           "List-Unsubscribe", "List-Unsubscribe-Post"]


class Keeper:
    async def handle_DATA(self, server, session, envelope):
        with lock:
            if refusals["refuse"] > 0:
                refusals["refuse"] -= 1
                return f"{refusals['code']} not now"
        parsed = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        parts = {}
        for part in parsed.walk():
            kind = part.get_content_type()
            if kind in ("text/plain", "text/html") and kind not in parts:
                parts[kind] = part.get_content()
        kept = {
            "from": envelope.mail_from,
            "to": list(envelope.rcpt_tos),
            "headers": {name: parsed[name] for name in HEADERS if parsed[name] is not None},
            "text": parts.get("text/plain"),
            "html": parts.get("text/html"),
        }
        with lock:
            messages.append(kept)
        return "250 kept"


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, body):
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        with lock:
            self.answer(list(messages))

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        asked = json.loads(self.rfile.read(length) or b"{}")
        with lock:
            refusals.update(asked)
        self.answer(refusals)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


if __name__ == "__main__":
    smtp_port = free_port()
    controller = Controller(Keeper(), hostname="127.0.0.1", port=smtp_port)
    controller.start()
    http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"listening on {smtp_port} {http.server_address[1]}", flush=True)
    try:
        http.serve_forever()
    finally:
        controller.stop()
