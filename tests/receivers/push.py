"""A push service for the tests, as a browser's would be: it holds one subscription's keys
(a P-256 key pair and an auth secret, made here like a browser makes them), and decrypts every
push with an independent library (PyPI `http-ece`, RFC 8291's aes128gcm) after checking its
VAPID JWT (RFC 8292) with `cryptography`.

    python push.py        prints "listening on <port>", then serves on 127.0.0.1

- GET /_keys gives the subscription's keys: {"p256dh", "auth"} (base64url);
- POST /_control {"status": 201} answers the next pushes with that status;
- GET /_received lists every push, oldest first: its path, the headers RFC 8030 names, the
  decrypted payload, and the VAPID claims (or why they did not verify);
- any other POST is a push.
"""

import base64
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import http_ece
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

lock = threading.Lock()
private_key = ec.generate_private_key(ec.SECP256R1())
auth_secret = os.urandom(16)
settings = {"status": 201}
received = []


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def vapid_claims(header, origin):
    """The JWT's claims if it is signed by the key beside it, for this origin; else why not."""
    fields = dict(part.strip().split("=", 1) for part in header[len("vapid "):].split(","))
    token, key = fields["t"], fields["k"]
    signed, signature = token.rsplit(".", 1)
    public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64(key))
    raw = unb64(signature)
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    try:
        public.verify(der, signed.encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return {"error": "the signature does not verify"}
    head, body = (json.loads(unb64(part)) for part in signed.split("."))
    if head.get("alg") != "ES256":
        return {"error": f"alg {head.get('alg')}"}
    if body.get("aud") != origin:
        return {"error": f"aud {body.get('aud')} is not {origin}"}
    if not (time.time() < body.get("exp", 0) <= time.time() + 24 * 3600):
        return {"error": f"exp {body.get('exp')}"}
    return {"claims": body, "key": key}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body=None):
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        with lock:
            if self.path == "/_keys":
                point = private_key.public_key().public_bytes(
                    serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
                return self.answer(200, {"p256dh": b64(point), "auth": b64(auth_secret)})
            return self.answer(200, list(received))

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        if self.path == "/_control":
            with lock:
                settings.update(json.loads(body or b"{}"))
            return self.answer(200, settings)
        origin = f"http://{self.headers['host']}"
        kept = {
            "path": self.path,
            "headers": {name: self.headers.get(name) for name in
                        ["TTL", "Urgency", "Topic", "Content-Encoding", "Content-Type"]},
            "vapid": vapid_claims(self.headers.get("authorization", ""), origin),
        }
        try:
            plain = http_ece.decrypt(body, private_key=private_key, auth_secret=auth_secret,
                                     version="aes128gcm")
            kept["payload"] = json.loads(plain)
        except Exception as err:  # kept for the test to see, whatever it was
            kept["error"] = f"{type(err).__name__}: {err}"
        with lock:
            received.append(kept)
            status = settings["status"]
        self.answer(status)


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"listening on {server.server_address[1]}", flush=True)
    server.serve_forever()
