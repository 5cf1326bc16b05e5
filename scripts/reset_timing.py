"""How long `POST /password-resets` takes for an account that has a verified address and for an
address nobody has: the answers must be alike in body and in time, so that nobody can learn
from it who has an account. Used by `scripts/bench --only-push`.

    python3 scripts/reset_timing.py <server URL> <SMTP sink's HTTP URL> <runs>

The account's address is set and confirmed through the server's own mail (the sink is
`tests/receivers/smtp.py`). The two kinds of reset then alternate, `runs` of each, the first of
each pair switching every time; one JSON line gives each kind's median and 90th percentile in
milliseconds, the ratio of the medians, and that every answer was `202 {}`.
"""

import json
import re
import sys
import time
import urllib.request

api, sink, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])


def call(method, url, body=None, token=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("content-type", "application/json")
    if token:
        request.add_header("authorization", f"Bearer {token}")
    with urllib.request.urlopen(request) as answer:
        return answer.status, answer.read()


def mail_to(address):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        _, body = call("GET", f"{sink}/messages")
        mails = [m for m in json.loads(body) if address in m["to"]]
        if mails:
            return mails[-1]
        time.sleep(0.05)
    sys.exit(f"no mail reached {address}")


username = f"reset-timing-{int(time.time())}"
address = f"{username}@example.test"
_, body = call("POST", f"{api}/players", {"username": username})
token = json.loads(body)["token"]
call("PUT", f"{api}/players/me/email", {"email": address}, token)
link = re.search(r"token=([A-Za-z0-9_-]+)", mail_to(address)["text"]).group(1)
call("POST", f"{api}/email-verifications", {"token": link})

asks = {"known": {"username": username}, "unknown": {"email": "nobody@example.test"}}
times = {"known": [], "unknown": []}
alike = True
for run in range(runs):
    order = ["known", "unknown"] if run % 2 == 0 else ["unknown", "known"]
    for kind in order:
        started = time.perf_counter()
        status, body = call("POST", f"{api}/password-resets", asks[kind])
        times[kind].append((time.perf_counter() - started) * 1000)
        alike = alike and status == 202 and json.loads(body) == {}


def figures(values):
    values = sorted(values)
    return {"p50": round(values[len(values) // 2], 3), "p90": round(values[len(values) * 9 // 10], 3)}


known, unknown = figures(times["known"]), figures(times["unknown"])
print(json.dumps({"runs": runs, "known_ms": known, "unknown_ms": unknown,
                  "p50_ratio": round(known["p50"] / unknown["p50"], 3), "answers_alike": alike}))
