"""Protocol behaviour of adapter.py against mongobench's null test server,
which answers like a server but stores nothing (find returns canned
documents with an ObjectId _id, value "wiretest" and a person's fields)."""

from __future__ import annotations

import json
import platform
import pstats
import socket
import sys
import time

import mongoengine
import pymongo
import pytest
from conftest import STACKS, Server, init_msg

# The canned documents' shape, as mongobench would derive it: ObjectId ids,
# which the documents these tests write have too.
NULL_COLLECTIONS = [{
    "name": "items",
    "schema": {"fields": {"_id": {"type": "objectId"}, "value": {"type": "string"}}},
    "indexes": [{"keys": {"value": 1}, "options": {"name": "value_1"}}],
}]


def oid(n: int) -> dict:
    """The n-th ObjectId, in Extended JSON."""
    return {"$oid": f"{n:024x}"}


def op(i: int, kind: str, **kw) -> dict:
    return dict({"id": i, "name": f"op{i}", "kind": kind, "collection": "items",
                 "write_concern": None, "read_preference": None}, **kw)


def start(adapter_factory, stack, uri, operations, **kw):
    a = adapter_factory(stack)
    a.send(init_msg(stack, uri, "mb_py", NULL_COLLECTIONS, operations, **kw))
    return a


@pytest.mark.parametrize("stack", STACKS)
def test_handshake_reports_versions(adapter_factory, null_server, stack):
    a = start(adapter_factory, stack, null_server, [op(0, "findOne")])
    ready = a.expect("ready")
    assert ready["stack"] == stack
    want = {"python": platform.python_version(), "pymongo": pymongo.__version__}
    if stack == "python-mongoengine":
        want["mongoengine"] = mongoengine.__version__
    assert ready["versions"] == want
    a.send({"type": "exit"})
    assert a.recv() is None
    assert a.wait() == 0


# Each kind the stack runs, its arguments, and the documents the null
# server's answers amount to (it "matches and modifies" one document per
# update or delete statement and returns three documents per find).
COMMON_KINDS = [
    ("insertOne", {"document": {"_id": oid(1), "value": "a"}}, 1),
    ("insertMany", {"documents": [{"_id": oid(2), "value": "b"}, {"_id": oid(3), "value": "c"}]}, 2),
    ("findOne", {"filter": {"value": "wiretest"}, "projection": {"value": 1}, "sort": {"_id": -1}, "skip": 1}, 1),
    ("find", {"filter": {}, "sort": {"_id": 1}, "limit": 2, "batch_size": 10}, 2),
    ("find", {"filter": {"value": {"$exists": True}}}, 3),
    ("countDocuments", {"filter": {"value": "a"}, "limit": 5}, 0),
    ("aggregate", {"pipeline": [{"$match": {"value": "wiretest"}}]}, 3),
    ("updateOne", {"filter": {"_id": oid(1)}, "update": {"$set": {"value": "z"}}}, 1),
    ("updateMany", {"filter": {}, "update": {"$inc": {"n": 1}}}, 1),
    ("deleteOne", {"filter": {"_id": oid(1)}}, 1),
    ("deleteMany", {"filter": {"value": "z"}}, 1),
]
PYMONGO_ONLY = [
    ("replaceOne", {"filter": {"_id": oid(1)}, "replacement": {"_id": oid(1), "value": "r"}}, 1),
]


@pytest.mark.parametrize("stack", STACKS)
def test_each_kind_runs(adapter_factory, null_server, stack):
    kinds = COMMON_KINDS + (PYMONGO_ONLY if stack == "python-pymongo" else [])
    ops = [op(i, k) for i, (k, _, _) in enumerate(kinds)]
    a = start(adapter_factory, stack, null_server, ops)
    a.expect("ready")
    results, _, _ = a.run_phase(1, {0: [[i, args] for i, (_, args, _) in enumerate(kinds)]})
    assert len(results) == len(kinds)
    by_id = {r[1]: r for r in results}
    for i, (kind, _, docs) in enumerate(kinds):
        _, opid, start_ns, latency_ns, got_docs, err, decode_ns = by_id[i]
        assert err is None, (kind, err)
        assert got_docs == docs, kind
        assert start_ns >= 0 and latency_ns > 0
        # The client's own time on the call: the worker thread's CPU time,
        # an integer number of nanoseconds, never absent.
        assert isinstance(decode_ns, int) and decode_ns >= 0, (kind, decode_ns)
    # One worker runs its queue in order, so its starts only grow.
    starts = [r[2] for r in sorted(results, key=lambda r: r[1])]
    assert starts == sorted(starts)
    a.send({"type": "exit"})
    assert a.wait() == 0


def test_mongoengine_refuses_replace_one(adapter_factory, null_server):
    a = start(adapter_factory, "python-mongoengine", null_server, [op(0, "find"), op(1, "replaceOne", name="swap")])
    msg = a.expect("fatal")
    assert "'swap'" in msg["message"] and "replaceOne" in msg["message"]
    assert "no replace" in msg["message"]
    assert "\n" not in msg["message"]
    assert a.wait() != 0


# Kinds mongobench never sends (the schema refuses them; the adapter once
# ran them) and one nobody sends: each is a one-line fatal at init, before
# any connection, naming the operation and the kind, on every stack.
@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize("kind", ["drop", "createIndexes", "runCommand", "explode"])
def test_kind_go_never_sends_is_fatal(adapter_factory, null_server, stack, kind):
    a = start(adapter_factory, stack, null_server, [op(0, "find"), op(1, kind, name="tidy")])
    msg = a.expect("fatal")
    assert f"operation 'tidy': kind '{kind}' is not a protocol kind" in msg["message"]
    assert "\n" not in msg["message"]
    assert a.recv() is None
    assert a.wait() != 0


def test_wrong_protocol_is_fatal(adapter_factory, null_server):
    a = adapter_factory("python-pymongo")
    m = init_msg("python-pymongo", null_server, "mb_py", NULL_COLLECTIONS, [])
    m["protocol"] = 2
    a.send(m)
    assert "protocol 2" in a.expect("fatal")["message"]
    assert a.wait() != 0


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("stack", STACKS)
def test_no_connection_is_fatal_without_the_password(adapter_factory, stack):
    uri = f"mongodb://bench:s3cr3t-pw@127.0.0.1:{closed_port()}/?directConnection=true"
    a = adapter_factory(stack)
    m = init_msg(stack, uri, "mb_py", NULL_COLLECTIONS, [op(0, "find")])
    m["timeout_ms"] = 500
    a.send(m)
    msg = a.expect("fatal")
    assert "ServerSelectionTimeoutError" in msg["message"]
    assert "s3cr3t-pw" not in msg["message"] and "s3cr3t-pw" not in "".join(a.stderr)
    assert a.wait() != 0


@pytest.mark.parametrize("stack", STACKS)
def test_need_at_half_a_batch_and_starved(adapter_factory, null_server, stack):
    a = start(adapter_factory, stack, null_server, [op(0, "findOne")])
    a.expect("ready")
    results, starved, seen = a.run_phase(2, {0: [[0, {"filter": {}}]] * 10, 1: [[0, {}]] * 4}, settle_s=2.0)
    assert len(results) == 14
    needs = [m["worker"] for m in seen if m["type"] == "need"]
    # One need per worker for its one batch: at half the batch, not again
    # while that need is unanswered.
    assert sorted(needs) == [0, 1]
    # Both workers ran dry and waited once each.
    assert starved == 2


@pytest.fixture(scope="module")
def slow_server(mongobench):
    """A null server that holds every reply 20 ms."""
    s = Server([mongobench, "testserver", "--addr", "127.0.0.1:0", "--delay", "20ms", "--for", "20m"])
    yield s.uri
    s.stop()


@pytest.mark.parametrize("stack", STACKS)
def test_results_flow_while_running(adapter_factory, slow_server, stack):
    a = start(adapter_factory, stack, slow_server, [op(0, "find")])
    a.expect("ready")
    # 40 calls of at least 20 ms each take at least 0.8 s; results must not
    # wait for stop.
    results, _, seen = a.run_phase(1, {0: [[0, {}]] * 40})
    assert len(results) == 40
    stop_at = next(i for i, m in enumerate(seen) if m["type"] == "stopped")
    assert sum(1 for m in seen[:stop_at] if m["type"] == "done") >= 2
    assert all(r[3] >= 20_000_000 for r in results), [r[3] for r in results]


@pytest.mark.parametrize("stack", STACKS)
def test_stop_with_ops_in_flight_then_next_phase(adapter_factory, slow_server, stack):
    a = start(adapter_factory, stack, slow_server, [op(0, "find"), op(1, "insertOne")])
    a.expect("ready")
    a.send({"type": "phase", "phase": "run", "workers": 4})
    for w in range(4):
        a.send({"type": "ops", "worker": w, "ops": [[0, {}]] * 200})
    first = a.expect("done")
    a.send({"type": "stop"})
    results = [[first["worker"]] + r for r in first["r"]]
    while (m := a.recv())["type"] != "stopped":
        if m["type"] == "done":
            results += [[m["worker"]] + r for r in m["r"]]
    assert m["starved"] == 0
    # Stopped long before the 800 queued calls ran, and the calls that were
    # in flight finished normally instead of being abandoned.
    assert 0 < len(results) < 800
    assert all(r[5] is None for r in results)
    # Nothing arrives after stopped; a new phase starts its own clock.
    a.send({"type": "phase", "phase": "load", "workers": 1})
    a.send({"type": "ops", "worker": 0, "ops": [[1, {"document": {"_id": oid(9), "value": "x"}}]]})
    while (m := a.recv())["type"] == "need":
        pass
    assert m["type"] == "done"
    assert m["worker"] == 0 and len(m["r"]) == 1 and m["r"][0][0] == 1 and m["r"][0][4] is None
    assert m["r"][0][1] < 5_000_000_000
    a.send({"type": "stop"})
    # The worker may or may not have reached its empty queue before stop.
    assert a.expect("stopped")["starved"] in (0, 1)
    a.send({"type": "exit"})
    assert a.recv() is None
    assert a.wait() == 0


@pytest.mark.parametrize("stack", STACKS)
def test_timeout_is_classified(adapter_factory, mongobench, stack):
    # The server answers normally for 10 s (the handshake), then holds every
    # reply for a minute, far past the operation timeout of 1 s.
    s = Server([mongobench, "testserver", "--addr", "127.0.0.1:0", "--stall-after", "10s", "--stall-for", "60s",
                "--for", "5m"])
    started = time.monotonic()
    try:
        a = adapter_factory(stack)
        m = init_msg(stack, s.uri, "mb_py", NULL_COLLECTIONS, [op(0, "find")])
        m["timeout_ms"] = 1000
        a.send(m)
        a.expect("ready")
        assert time.monotonic() - started < 9, "the machine is too slow for this test's handshake window"
        time.sleep(max(0.0, 10.5 - (time.monotonic() - started)))
        results, _, _ = a.run_phase(1, {0: [[0, {}]]})
    finally:
        s.stop()
    assert len(results) == 1
    err = results[0][5]
    assert err is not None and err["timeout"] is True, err
    assert err["code"] is None or err["code"] == 50, err


@pytest.mark.parametrize("stack", STACKS)
def test_profile_files_written(adapter_factory, null_server, tmp_path, stack):
    prefix = str(tmp_path / "prof")
    a = start(adapter_factory, stack, null_server, [op(0, "find")], profile=prefix)
    a.expect("ready")
    results, _, _ = a.run_phase(2, {0: [[0, {}]] * 30, 1: [[0, {}]] * 30})
    assert len(results) == 60
    a.send({"type": "exit"})
    assert a.recv() is None
    assert a.wait() == 0
    stats = pstats.Stats(prefix + ".pstats")
    # Both workers' profiles were merged: the stack's find ran 60 times.
    finds = [v for (file, _, func), v in stats.stats.items() if func == "find" and "pymongo" in file
             and file.endswith("collection.py")]
    assert finds and finds[0][1] == 60
    with open(prefix + ".top.json", encoding="utf-8") as f:
        top = json.load(f)
    for key in ("frames", "frames_by_total"):
        frames = top[key]
        assert 0 < len(frames) <= 30
        assert set(frames[0]) == {"function", "file", "line", "self_ms", "total_ms", "calls"}
    selfs = [f["self_ms"] for f in top["frames"]]
    assert selfs == sorted(selfs, reverse=True)
    totals = [f["total_ms"] for f in top["frames_by_total"]]
    assert totals == sorted(totals, reverse=True)
    assert any("pymongo" in f["file"] for f in top["frames_by_total"])
    # On Python 3.11 only the timed calls are profiled: no frame of the
    # adapter's own queue handling or protocol I/O. (From 3.12 on, cProfile
    # sees every thread and the adapter profiles whole phases.)
    own = ("next_op", "read_loop", "_loop", "flush")
    assert sys.version_info >= (3, 12) or not any(f["function"] in own for f in top["frames_by_total"])


def test_protocol_misuse_is_fatal(adapter_factory, null_server):
    a = start(adapter_factory, "python-pymongo", null_server, [op(0, "find")])
    a.expect("ready")
    a.send({"type": "phase", "phase": "run", "workers": 2})
    a.send({"type": "ops", "worker": 5, "ops": [[0, {}]]})
    msg = a.expect("fatal")
    assert "worker 5" in msg["message"] and "2 workers" in msg["message"]
    assert a.wait() != 0

    a = start(adapter_factory, "python-pymongo", null_server, [op(0, "find")])
    a.expect("ready")
    a.send({"type": "phase", "phase": "run", "workers": 1})
    a.send({"type": "phase", "phase": "run", "workers": 1})
    assert "stop first" in a.expect("fatal")["message"]
    assert a.wait() != 0


def test_eof_ends_the_session_and_writes_the_profile(adapter_factory, null_server, tmp_path):
    prefix = str(tmp_path / "eof")
    a = start(adapter_factory, "python-pymongo", null_server, [op(0, "find")], profile=prefix)
    a.expect("ready")
    a.send({"type": "phase", "phase": "run", "workers": 1})
    a.send({"type": "ops", "worker": 0, "ops": [[0, {}]] * 5})
    while a.recv()["type"] != "done":
        pass
    a.proc.stdin.close()  # mongobench died mid-phase
    assert a.wait() == 0
    assert pstats.Stats(prefix + ".pstats").total_calls > 0


@pytest.mark.parametrize("stack", STACKS)
def test_lost_server_is_a_network_error(adapter_factory, mongobench, stack):
    s = Server([mongobench, "testserver", "--addr", "127.0.0.1:0", "--for", "5m"])
    try:
        a = adapter_factory(stack)
        m = init_msg(stack, s.uri, "mb_py", NULL_COLLECTIONS, [op(0, "find")])
        m["timeout_ms"] = 2000
        a.send(m)
        a.expect("ready")
    finally:
        s.stop()
    results, _, _ = a.run_phase(1, {0: [[0, {}]] * 2})
    errs = [r[5] for r in results]
    assert all(e is not None and e["network"] is True and e["code"] is None for e in errs), errs
    a.send({"type": "exit"})
    assert a.wait() == 0


# The shape of `mongobench testserver`'s documents as mongobench derives it
# from workloads/studies/document-load.yaml's template: an ObjectId _id,
# strings, an int, dates, a nested document and an array.
PEOPLE = [{
    "name": "people",
    "schema": {"fields": {
        "_id": {"type": "objectId"},
        "name": {"type": "string"},
        "age": {"type": "long"},
        "birthday": {"type": "date"},
        "timestamp": {"type": "date"},
        "address": {"type": "object", "fields": {"street": {"type": "string"}, "city": {"type": "string"},
                                                 "zip": {"type": "string"}}},
        "tags": {"type": "array", "items": {"type": "string"}},
    }},
    "indexes": [],
}]


@pytest.fixture(scope="module")
def template_server(mongobench):
    """The null server answering find with 200 template documents."""
    s = Server([mongobench, "testserver", "--addr", "127.0.0.1:0", "--find-docs", "200", "--for", "10m"])
    yield s.uri
    s.stop()


@pytest.mark.parametrize("stack", STACKS)
def test_template_documents_load_with_a_decode_time(adapter_factory, template_server, stack):
    """Every stack loads the template documents through a schema of their
    shape (MongoEngine Document instances included), and every record
    carries the decode time, DECODE_NS, as its sixth element."""
    ops = [dict(op(0, "find"), collection="people"), dict(op(1, "findOne"), collection="people")]
    a = adapter_factory(stack)
    a.send(init_msg(stack, template_server, "mb_py_people", PEOPLE, ops))
    a.expect("ready")
    results, _, seen = a.run_phase(1, {0: [[0, {}], [1, {}], [0, {}]]})
    assert len(results) == 3
    for _, opid, _, _, docs, err, decode_ns in results:
        assert err is None, err
        assert docs == (200 if opid == 0 else 1)
        assert isinstance(decode_ns, int) and decode_ns >= 0
    assert all(len(r) == 6 for m in seen if m["type"] == "done" for r in m["r"])
    a.send({"type": "exit"})
    assert a.wait() == 0
