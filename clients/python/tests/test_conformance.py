"""The protocol's shared conformance fixtures (clients/protocol), which
mongobench's Go side and the Node.js adapter check too: the schema accepts
every valid message and refuses every invalid one, and each stack answers
the request/reply exchanges as written, against the null wire-protocol
server, with replies the schema accepts."""

from __future__ import annotations

import json
import pathlib

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

PROTOCOL = pathlib.Path(__file__).resolve().parent.parent.parent / "protocol"
SCHEMA = json.loads((PROTOCOL / "schema.json").read_text())
STACKS = ("python-pymongo", "python-mongoengine")


def read(name: str) -> dict:
    return json.loads((PROTOCOL / "fixtures" / name).read_text())


def validator(direction: str) -> Draft202012Validator:
    Draft202012Validator.check_schema(SCHEMA)
    registry = Registry().with_resource(SCHEMA["$id"], Resource.from_contents(SCHEMA))
    return Draft202012Validator({"$ref": f"{SCHEMA['$id']}#/$defs/{direction}"}, registry=registry)


VALIDATORS = {d: validator(d) for d in ("request", "reply")}


@pytest.mark.parametrize("m", read("valid.json")["messages"], ids=lambda m: m["name"])
def test_valid_fixture(m):
    errors = [e.message for e in VALIDATORS[m["direction"]].iter_errors(m["message"])]
    assert not errors, f"{m['direction']} {m['name']!r} refused: {errors}"


@pytest.mark.parametrize("m", read("invalid.json")["messages"], ids=lambda m: m["name"])
def test_invalid_fixture(m):
    assert not VALIDATORS[m["direction"]].is_valid(m["message"]), f"{m['direction']} {m['name']!r} accepted"


def substitute(v, variables: dict):
    """Replaces "$URI" and "$STACK" anywhere in a fixture."""
    if isinstance(v, str):
        return variables.get(v, v)
    if isinstance(v, list):
        return [substitute(x, variables) for x in v]
    if isinstance(v, dict):
        return {k: substitute(x, variables) for k, x in v.items()}
    return v


def condensed(messages: list) -> list:
    """Leaves need lines out and merges consecutive done lines into
    {type: done, worker, ops: [ids]}."""
    out: list = []
    for m in messages:
        if m["type"] == "need":
            continue
        if m["type"] == "done":
            ids = [r[0] for r in m["r"]]
            if out and out[-1]["type"] == "done" and out[-1]["worker"] == m["worker"]:
                out[-1]["ops"].extend(ids)
            else:
                out.append({"type": "done", "worker": m["worker"], "ops": ids})
            continue
        out.append(m)
    return out


PROTOCOL_KINDS = SCHEMA["$defs"]["operation"]["properties"]["kind"]["enum"]


def foreign_kinds() -> list:
    """The invalid fixtures whose init names an operation kind outside the
    protocol's (kinds mongobench never sends), with that kind."""
    out = []
    for m in read("invalid.json")["messages"]:
        msg = m["message"]
        if m["direction"] != "request" or msg.get("type") != "init":
            continue
        for o in msg.get("operations") or []:
            if o.get("kind") not in PROTOCOL_KINDS:
                out.append(pytest.param(msg, o, id=m["name"]))
    return out


def test_fixtures_hold_foreign_kinds():
    # The next test must have cases: the kinds the adapters once ran.
    kinds = {p.values[1]["kind"] for p in foreign_kinds()}
    assert {"drop", "runCommand"} <= kinds


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize(("init", "operation"), foreign_kinds())
def test_foreign_kind_is_fatal(stack, init, operation, null_server, adapter_factory):
    a = adapter_factory(stack)
    a.send(dict(init, stack=stack, uri=null_server))
    msg = a.expect("fatal")
    assert VALIDATORS["reply"].is_valid(msg), msg
    want = f"operation {operation['name']!r}: kind {operation['kind']!r} is not a protocol kind"
    assert want in msg["message"]
    assert a.recv() is None
    assert a.wait() != 0


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize("ex", read("exchanges.json")["exchanges"], ids=lambda ex: ex["name"])
def test_exchange(stack, ex, null_server, adapter_factory):
    variables = {"$URI": null_server, "$STACK": stack}
    a = adapter_factory(stack)
    got: list = []
    records = 0
    for req in substitute(ex["requests"], variables):
        if req["type"] == "stop" and ex.get("records_before_stop"):
            while records < ex["records_before_stop"]:
                m = a.recv()
                assert m is not None, f"the adapter ended before reporting; stderr: {''.join(a.stderr)}"
                got.append(m)
                if m["type"] == "done":
                    records += len(m["r"])
        a.proc.stdin.write((json.dumps(req) + "\n").encode())
        a.proc.stdin.flush()
    a.proc.stdin.close()
    while (m := a.recv()) is not None:
        got.append(m)
    code = a.wait()

    for m in got:
        errors = [e.message for e in VALIDATORS["reply"].iter_errors(m)]
        assert not errors, f"reply {m}: {errors}"

    replies = condensed(got)
    want = substitute(ex["replies"], variables)
    assert len(replies) == len(want), f"replies {replies}, want {want}"
    for i, (g, w) in enumerate(zip(replies, want, strict=True)):
        for k, v in w.items():
            assert g.get(k) == v, f"reply {i} ({g['type']}) field {k}: {g.get(k)!r}, want {v!r}"

    if ex["exit_code"] == "nonzero":
        assert code != 0
    else:
        assert code == ex["exit_code"]
