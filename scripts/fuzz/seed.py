"""Prepares one fuzz run as one person and prints its schemathesis config (TOML) on stdout.

Logs in, makes the things every `{id}` operation needs so the fuzzer gets past "not found" (a
conversation with a task whose two calls wait for approval, a demo order, a live grant, a spare
API token to revoke, a pair of decision links to revoke, a group of approvers, a delegation), and pins each operation's `id` to them; bodies and queries are still fuzzed.

Usage: seed.py BASE_URL USER PASSWORD (token|session) FAIL_ON
  token:   the run authenticates with a new API token of USER
  session: the run authenticates with USER's session cookie (so it can make tokens); logging out
           is left out of that run, since it would end the session mid-run
  FAIL_ON: schemathesis warnings that fail the run, comma-separated
"""
import http.cookiejar
import json
import sys
import time
import urllib.request

base, user, password, auth, fail_on = sys.argv[1:6]
cookies = http.cookiejar.CookieJar()
opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(cookies))


def call(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    with opener.open(request, timeout=10) as response:
        text = response.read()
        return json.loads(text) if text else None


def pending_of(task_id, count):
    for _ in range(100):
        found = [a for a in call("GET", "/api/approvals") if a["task_id"] == task_id and a["state"] == "pending"]
        if len(found) >= count:
            return found
        time.sleep(0.1)
    sys.exit(f"seed: task {task_id} did not ask for {count} approvals within 10 s")


def chat(text):
    conversation = call("POST", "/api/conversations", {"title": "fuzz"})["id"]
    task = call("POST", f"/api/conversations/{conversation}/messages", {"text": text})["task_id"]
    return conversation, task


call("POST", "/api/session", {"username": user, "password": password})
conversation, task = chat("refund order 1001 and 1002")
approval = pending_of(task, 2)[0]["id"]

# A grant comes from approving with one, in a chat of its own so the calls above stay pending.
granting, granting_task = chat("refund $1 on order 1003")
call("POST", f"/api/approvals/{pending_of(granting_task, 1)[0]['id']}/approve", {"grant": {"max_uses": 5}})
grant = None
for _ in range(100):
    events = call("GET", f"/api/conversations/{granting}?events=all")["events"]
    grant = next((e["grant_id"] for e in events if e["type"] == "grant-created"), None)
    if grant:
        break
    time.sleep(0.1)
if grant is None:
    sys.exit("seed: approving with a grant made no grant-created event")

# A group for the `{name}` operations (admins only; as a user they answer 403 whatever the name).
group = "fuzzers"
if auth == "session":
    call("POST", "/api/groups", {"name": group, "members": [user]})

# A delegation to the other fuzz user, for the `/api/delegations/{id}` operations.
tomorrow = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 86400))
other = "fuzzuser" if user == "fuzzer" else "fuzzer"
delegation = call("POST", "/api/delegations", {"to": other, "ends_at": tomorrow})["id"]

# Decision links of the user's own, for `/api/links/{id}/revoke`.
link = call("POST", f"/api/approvals/{approval}/links", {})["link_id"]

# The fuzzer revokes this one, not the token it runs with.
spare = call("POST", "/api/tokens", {"name": "spare"})["id"]
if auth == "token":
    headers = {"Authorization": "Bearer " + call("POST", "/api/tokens", {"name": "fuzz"})["token"]}
else:
    headers = {"Cookie": "; ".join(f"{c.name}={c.value}" for c in cookies)}

print(f"headers = {{ {', '.join(f'{json.dumps(k)} = {json.dumps(v)}' for k, v in headers.items())} }}\n")
print(f"[warnings]\nfail-on = {json.dumps([w for w in fail_on.split(',') if w])}\n")
ids = {
    r"^/api/conversations/\{id\}": conversation,
    r"^/api/approvals/\{id\}": approval,
    r"^/api/tasks/\{id\}": task,
    r"^/api/orders/\{id\}": "1004",
    r"^/api/grants/\{id\}": grant,
    r"^/api/tokens/\{id\}": spare,
    r"^/api/delegations/\{id\}": delegation,
    r"^/api/links/\{id\}": link,
}
for regex, value in ids.items():
    print(f"[[operations]]\ninclude-path-regex = {json.dumps(regex)}\nparameters = {{ \"path.id\" = {json.dumps(value)} }}\n")
groups_regex = json.dumps(r"^/api/groups/\{name\}")
print(f"[[operations]]\ninclude-path-regex = {groups_regex}\nparameters = {{ \"path.name\" = {json.dumps(group)} }}\n")
# Turning an account off and on: the other fuzz user's (its own run has finished by then; turning
# oneself off is refused).
users_regex = json.dumps(r"^/api/users/\{name\}")
print(f"[[operations]]\ninclude-path-regex = {users_regex}\nparameters = {{ \"path.name\" = {json.dumps(other)} }}\n")
# Deleting the group would leave its other operations nothing but 404s (the API tests cover it).
print('[[operations]]\ninclude-name = "DELETE /api/groups/{name}"\nenabled = false\n')
if auth == "session":
    print('[[operations]]\ninclude-name = "DELETE /api/session"\nenabled = false\n')
