#!/usr/bin/env python3
"""End-to-end client for lodge's addr_check using Python's requests, as an
integrator would write it. Usage: client.py URL CERT KEY USER PASSWORD.
Prints ALL OK when every check passes; exits non-zero otherwise."""
import sys

import requests

url, cert, key, user, password = sys.argv[1:6]
endpoint = url + "/apiv2/jsonrpc"
failures = []


def check(name, cond, detail=""):
    if not cond:
        failures.append(f"{name}: {detail}")


def call(payload, auth=None, headers=None):
    h = {"Content-Type": "application/json"}
    if headers:
        h.update(headers)
    return requests.post(endpoint, json=payload, auth=auth, headers=h, verify=cert, timeout=30)


bearer = {"Authorization": "Bearer " + key}

# single address, array form
r = call({"jsonrpc": "2.0", "id": 7, "method": "addr_check",
          "params": {"address": ["Joe Blogs", "10 Jones St", "Melbourne VIC 3000"]}}, headers=bearer)
check("single", r.status_code == 200, r.text)
res = r.json()
check("single id", res.get("id") == 7, res)
check("single status", res["result"]["status"] == "matched", res)
check("single echo", res["result"]["address"] == ["Joe Blogs", "10 Jones St", "Melbourne VIC 3000"], res)

# mixed forms, in order, with detail
addrs = [["Joe Blogs", "10 Jones St", "Smithville NSW 2987"], "Jo\nPO Box 5\nSydney NSW 2001",
         "10 Downing St, London SW1A 2AA, UK", "Jo, 1 Smith St, Melborne VIC 3000", "a,b"]
r = call({"jsonrpc": "2.0", "id": "x", "method": "addr_check", "params": {"addresses": addrs, "detail": True}}, headers=bearer)
out = r.json()["result"]
check("mixed count", len(out) == len(addrs), out)
check("mixed statuses", [o["status"] for o in out] == ["unmatched", "matched", "international", "unmatched", "invalid"], out)
check("mixed echo", [o["address"] for o in out] == addrs, out)
check("nation", out[2]["nation"] == "GBR", out[2])
check("suggestion", out[3]["detail"]["suggestion"] == ["JO", "1 SMITH ST", "MELBOURNE VIC 3000"], out[3])
check("message", "3 to 6 lines" in out[4].get("message", ""), out[4])

# Basic credentials through requests' auth
r = call({"jsonrpc": "2.0", "id": 1, "method": "addr_check", "params": {"address": "a,b,c"}},
         auth=requests.auth.HTTPBasicAuth(user, password))
check("basic", r.status_code == 200 and r.json()["result"]["status"] == "invalid", r.text)
r = call({"jsonrpc": "2.0", "id": 1, "method": "addr_check", "params": {"address": "a,b,c"}},
         auth=requests.auth.HTTPBasicAuth(user, password + "x"))
check("basic wrong", r.status_code == 401 and "WWW-Authenticate" in r.headers, r.status_code)
r = call({"jsonrpc": "2.0", "id": 1, "method": "addr_check", "params": {"address": "a,b,c"}})
check("none", r.status_code == 401, r.status_code)

# batch with a notification
r = call([{"jsonrpc": "2.0", "id": 1, "method": "addr_check", "params": {"address": "a,b,c"}},
          {"jsonrpc": "2.0", "method": "addr_check", "params": {"address": "a,b,c"}}], headers=bearer)
check("batch", r.status_code == 200 and len(r.json()) == 1, r.text)

# every error code
for payload, code in [
    ('{"jsonrpc":"2.0","id":1,"method"', -32700),
    ('{"jsonrpc":"2.0","id":1}', -32600),
    ('{"jsonrpc":"2.0","id":1,"method":"nope"}', -32601),
    ('{"jsonrpc":"2.0","id":1,"method":"addr_check","params":{"address":1}}', -32602),
]:
    r = requests.post(endpoint, data=payload, headers=dict(bearer, **{"Content-Type": "application/json"}), verify=cert, timeout=30)
    check(f"error {code}", r.json()["error"]["code"] == code, r.text)

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("ALL OK")
