"""A webhook receiver for the tests: verifies every delivery with the Standard Webhooks
reference library (PyPI `standardwebhooks`), keeps what it received, and answers as the test
tells it to.

    python webhooks.py            prints "listening on <port>", then serves on 127.0.0.1

- POST /_control {"secrets": [...], "status": 200, "delay": 0.0, "redirect": null}
  changes how it answers (any member left out stays as it was);
- GET /_received lists every delivery received, oldest first: the headers Standard Webhooks
  names, the body as JSON, and which of the secrets (by index) verified it;
- any other POST is a delivery: verified with each secret, kept, and answered with the status
  (after the delay), or with a redirect to `redirect`. One no secret verifies is answered 401.
"""

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

lock = threading.Lock()
settings = {"secrets": [], "status": 200, "delay": 0.0, "redirect": None}
received = []


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/_received":
            with lock:
                body = json.dumps(received).encode()
            self.answer(200, body, [("content-type", "application/json")])
        else:
            self.answer(404)

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        data = self.rfile.read(length)
        if self.path == "/_control":
            with lock:
                settings.update(json.loads(data))
            self.answer(204)
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        with lock:
            secrets = list(settings["secrets"])
            status, delay, redirect = settings["status"], settings["delay"], settings["redirect"]
        verified = []
        for index, secret in enumerate(secrets):
            try:
                Webhook(secret).verify(data, headers)
                verified.append(index)
            except WebhookVerificationError:
                pass
        try:
            body = json.loads(data)
        except ValueError:
            body = None
        with lock:
            received.append({
                "path": self.path,
                "id": headers.get("webhook-id"),
                "timestamp": headers.get("webhook-timestamp"),
                "signature": headers.get("webhook-signature"),
                "body": body,
                "verified": verified,
            })
        if delay:
            time.sleep(delay)
        if not verified:
            self.answer(401, b"no secret verifies this")
        elif redirect:
            self.answer(302, headers=[("location", redirect)])
        else:
            self.answer(status, b"received")


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(f"listening on {server.server_address[1]}", flush=True)
server.serve_forever()
