"""Drives the generated Python client (client.py in CLIENT_DIR) against a running Omnigate; prints one JSON line.

The chat completion goes through the client's own `send`: the generator's create_chat_completion streams and
drops the request body (it sends none), so the generated method cannot make a call the server accepts."""
import json
import os
import sys

sys.path.insert(0, os.environ["CLIENT_DIR"])
import client as og  # noqa: E402

url, key = os.environ["OMNIGATE_URL"], os.environ["OMNIGATE_KEY"]
seen = {}


def on_response(response, context):
    seen["request_id"] = response.headers.get("x-request-id")
    return None


# httpx's default timeout is 5 s: a server's first calls (its validator built on first use) on a loaded 2-core
# machine can take longer than that, so the smoke test waits as long as the test around it does.
TIMEOUT = 50.0
api = og.Client(url, auth={"bearer": key}, timeout=TIMEOUT, middleware=[{"on_response": on_response}])
models = [model.id for model in api.list_models().data]

op = og._OPERATIONS["create_chat_completion"]
headers, _ = og.resolve_auth(op["security"], api._auth)
answer = og.send(api._http, api._config, op, og.build_url(url, op["path"], {}), method="POST", headers=headers,
                 json_body={"model": "local:chat", "messages": [{"role": "user", "content": "Hello from Python"}]})
chat = answer.json()["choices"][0]["message"]["content"]

wrong = og.Client(url, auth={"bearer": "og-wrong-key"}, timeout=TIMEOUT, middleware=[{"on_response": on_response}])
try:
    wrong.list_models()
    error = None
except og.ApiError as failure:
    error = {"status": failure.status, "code": failure.body["error"]["code"], "requestId": seen.get("request_id")}
print(json.dumps({"models": models, "chat": chat, "error": error}))
