"""Behaviour of both stacks against a real database: embedded FerretDB,
started by `mongobench serve`. What the adapter wrote is checked with a
plain PyMongo client beside it."""

from __future__ import annotations

import datetime

import pymongo
import pytest
from bson import ObjectId
from bson.int64 import Int64
from conftest import STACKS, init_msg

UTC = datetime.timezone.utc

# A collection's schema as mongobench derives it from a document template.
PEOPLE_SCHEMA = {"fields": {
    "_id": {"type": "objectId"},
    "name": {"type": "string"},
    "n": {"type": "int"},
    "big": {"type": "long"},
    "score": {"type": "double"},
    "at": {"type": "date"},
    "ok": {"type": "bool"},
    "tags": {"type": "array", "items": {"type": "string"}},
    "addr": {"type": "object", "fields": {"city": {"type": "string"}, "zip": {"type": "int"}}},
    "x": {"type": "mixed"},
}}


def collections(name: str) -> list:
    return [{"name": name, "schema": PEOPLE_SCHEMA,
             "indexes": [{"keys": {"name": 1}, "options": {"unique": True, "name": "name_1"}}]}]


def op(i: int, kind: str, coll: str) -> dict:
    return {"id": i, "name": f"{kind}{i}", "kind": kind, "collection": coll,
            "write_concern": {"w": 1, "j": False}, "read_preference": "primary"}


def person(name: str, n: int) -> dict:
    return {"_id": ObjectId(), "name": name, "n": n, "big": Int64(2**40 + n), "score": float(n) + 0.5,
            "at": datetime.datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=UTC), "ok": n % 2 == 0,
            "tags": ["t", name], "addr": {"city": "c" + name, "zip": 1000 + n}, "x": Int64(n)}


@pytest.fixture
def db(ferret, request):
    """A fresh database per test, named after it."""
    client = pymongo.MongoClient(ferret, tz_aware=True, serverSelectionTimeoutMS=20000)
    name = "mbpy_" + "".join(ch if ch.isalnum() else "_" for ch in request.node.name)[:40]
    client.drop_database(name)
    yield client[name]
    client.drop_database(name)
    client.close()


def run(adapter_factory, uri, stack, db, coll, calls):
    """Runs calls [(kind, args)] in order on one worker; returns results."""
    kinds = sorted({k for k, _ in calls})
    ops = [op(i, k, coll) for i, k in enumerate(kinds)]
    a = adapter_factory(stack)
    a.send(init_msg(stack, uri, db.name, collections(coll), ops))
    a.expect("ready")
    results, _, _ = a.run_phase(1, {0: [[kinds.index(k), args] for k, args in calls]})
    a.send({"type": "exit"})
    assert a.wait() == 0, "".join(a.stderr)
    # One worker, one queue: results come in call order.
    assert [r[1] for r in results] == [kinds.index(k) for k, _ in calls]
    return results


@pytest.mark.parametrize("stack", STACKS)
def test_ejson_types_survive(adapter_factory, ferret, db, stack):
    one, many = person("one", 1), [person("two", 2), person("three", 3)]
    results = run(adapter_factory, ferret, stack, db, "people", [
        ("insertOne", {"document": one}),
        ("insertMany", {"documents": many}),
        ("findOne", {"filter": {"_id": one["_id"], "big": one["big"], "at": one["at"], "n": 1, "score": 1.5}}),
        ("find", {"filter": {"x": {"$in": [Int64(2), Int64(3)]}}, "sort": {"n": 1}}),
    ])
    assert [(r[4], r[5]) for r in results] == [(1, None), (2, None), (1, None), (2, None)]
    for want in [one] + many:
        got = db.people.find_one({"_id": want["_id"]})
        assert got is not None, want["name"]
        assert type(got["n"]) is int and got["n"] == want["n"]
        assert type(got["big"]) is Int64 and got["big"] == want["big"]
        assert type(got["score"]) is float and got["score"] == want["score"]
        assert got["at"] == want["at"]
        assert type(got["ok"]) is bool and got["ok"] == want["ok"]
        assert got["tags"] == want["tags"]
        assert got["addr"] == want["addr"] and type(got["addr"]["zip"]) is int
        assert type(got["x"]) is Int64 and got["x"] == want["x"]


@pytest.mark.parametrize("stack", STACKS)
def test_each_kind_on_a_real_database(adapter_factory, ferret, db, stack):
    people = [person(n, i + 1) for i, n in enumerate("abcd")]
    calls = [
        ("insertMany", {"documents": people}, 4),
        ("insertOne", {"document": person("e", 5)}, 1),
        ("findOne", {"filter": {"n": {"$gt": 2}}, "sort": {"n": -1}, "projection": {"name": 1}}, 1),
        ("findOne", {"filter": {"name": "nobody"}}, 0),
        ("find", {"filter": {"n": {"$gte": 2}}, "sort": {"n": 1}, "skip": 1, "limit": 2, "batch_size": 1}, 2),
        ("find", {"filter": {}, "projection": {"addr": 0}}, 5),
        ("countDocuments", {"filter": {"n": {"$gt": 1}}}, 0),
        ("aggregate", {"pipeline": [{"$match": {"n": {"$gt": 1}}}, {"$project": {"name": 1}}]}, 4),
        ("updateOne", {"filter": {"name": "a"}, "update": {"$set": {"score": 9.5}}}, 1),
        ("updateMany", {"filter": {"n": {"$gte": 3}}, "update": {"$inc": {"n": 10}}}, 3),
        ("updateOne", {"filter": {"name": "nobody"}, "update": {"$set": {"n": 0}}}, 0),
    ]
    if stack == "python-pymongo":
        calls.append(("replaceOne", {"filter": {"name": "b"}, "replacement": dict(person("b", 2), _id=people[1]["_id"],
                                                                                  score=7.0)}, 1))
    calls += [
        ("deleteOne", {"filter": {"name": "a"}}, 1),
        ("deleteMany", {"filter": {"n": {"$gte": 10}}}, 3),
        ("find", {"filter": {}}, 1),
        ("updateOne", {"filter": {"name": "u"}, "update": {"$set": {"n": 1}}, "upsert": True}, 1),
        ("updateMany", {"filter": {"name": "u"}, "update": {"$set": {"n": 1}}, "upsert": True}, 0),
    ]
    results = run(adapter_factory, ferret, stack, db, "people", [(k, a) for k, a, _ in calls])
    assert [(r[4], r[5]) for r in results] == [(d, None) for _, _, d in calls]
    left = list(db.people.find({}, {"_id": 0, "name": 1, "n": 1, "score": 1}))
    assert left == [{"name": "b", "n": 2, "score": 7.0 if stack == "python-pymongo" else 2.5}, {"name": "u", "n": 1}]


@pytest.mark.parametrize("stack", STACKS)
def test_duplicate_key_is_classified(adapter_factory, ferret, db, stack):
    db.people.create_index("name", unique=True)
    results = run(adapter_factory, ferret, stack, db, "people", [
        ("insertOne", {"document": person("dup", 1)}),
        ("insertOne", {"document": person("dup", 2)}),
        ("insertMany", {"documents": [person("x", 3), person("dup", 4), person("y", 5)]}),
    ])
    assert results[0][5] is None
    for r, name, docs in [(results[1], {"python-pymongo": "DuplicateKeyError", "python-mongoengine": "NotUniqueError"},
                           0),
                          (results[2], {"python-pymongo": "BulkWriteError", "python-mongoengine": "BulkWriteError"},
                           1)]:
        err = r[5]
        assert err is not None
        assert err["code"] == 11000, err
        assert err["name"] == name[stack], err
        assert err["network"] is False and err["timeout"] is False
        assert "dup" in err["message"]
        # An ordered insertMany stops at the duplicate: x went in.
        assert r[4] == docs
    assert sorted(d["name"] for d in db.people.find()) == ["dup", "x"]


def test_mongoengine_refuses_unordered_insert_many(adapter_factory, ferret, db):
    results = run(adapter_factory, ferret, "python-mongoengine", db, "people", [
        ("insertMany", {"documents": [person("p", 1)], "ordered": False}),
    ])
    err = results[0][5]
    assert err is not None and err["name"] == "Unsupported" and "ordered" in err["message"]
    assert db.people.count_documents({}) == 0


ODD_SCHEMA = {"fields": {
    "_id": {"type": "long"},
    "id": {"type": "string"},
    "save": {"type": "int"},
    "my-field": {"type": "string"},
    "_private": {"type": "bool"},
    "blob": {"type": "binary"},
    "items": {"type": "array", "items": {"type": "object", "fields": {"sku": {"type": "string"},
                                                                      "qty": {"type": "long"}}}},
    "any": {"type": "array"},
    "meta": {"type": "object", "fields": {}},
    "gone": {"type": "null"},
}}


# decimal is left out: FerretDB 1.24 does not store Decimal128 (it closes
# the connection); test_schema.py covers its mapping without a server.
@pytest.mark.parametrize("stack", STACKS)
def test_schema_mapping_keeps_names_and_types(adapter_factory, ferret, db, stack):
    from bson.binary import Binary

    doc = {"_id": Int64(7), "id": "not the key", "save": 3, "my-field": "dash", "_private": True,
           "blob": Binary(b"\x00\x01", 0),
           "items": [{"sku": "s1", "qty": Int64(2)}], "any": [1, "two", 3.0], "meta": {"k": "v"}, "gone": None}
    a = adapter_factory(stack)
    a.send(init_msg(stack, ferret, db.name, [{"name": "odd", "schema": ODD_SCHEMA, "indexes": []}],
                    [op(0, "insertOne", "odd"), op(1, "find", "odd")]))
    a.expect("ready")
    projection = {"my-field": 1, "items.sku": 1}
    results, _, _ = a.run_phase(1, {0: [[0, {"document": doc}],
                                        [1, {"filter": {"_id": Int64(7)}, "projection": projection}],
                                        [1, {"filter": {}, "sort": {"_private": -1, "save": 1}}]]})
    a.send({"type": "exit"})
    assert a.wait() == 0
    assert [(r[4], r[5]) for r in results] == [(1, None), (1, None), (1, None)]
    got = db.odd.find_one({"_id": 7})
    assert type(got["_id"]) is Int64
    assert got["id"] == "not the key" and got["save"] == 3 and got["my-field"] == "dash" and got["_private"] is True
    assert bytes(got["blob"]) == b"\x00\x01"
    assert got["items"] == [{"sku": "s1", "qty": 2}] and type(got["items"][0]["qty"]) is Int64
    assert got["any"] == [1, "two", 3.0] and got["meta"] == {"k": "v"}
    if stack == "python-mongoengine":
        # MongoEngine leaves fields whose value is None out of what it saves.
        assert "gone" not in got
    else:
        assert got["gone"] is None


@pytest.mark.parametrize("stack", STACKS)
def test_documents_without_id_get_one_whatever_the_id_type(adapter_factory, ferret, db, stack):
    # Loaded documents have string ids; the run's inserts have none, and
    # get the ObjectId the driver adds, as through the Go engine.
    schema = {"fields": {"_id": {"type": "string"}, "v": {"type": "int"}}}
    a = adapter_factory(stack)
    a.send(init_msg(stack, ferret, db.name, [{"name": "mixed_ids", "schema": schema, "indexes": []}],
                    [op(0, "insertOne", "mixed_ids"), op(1, "find", "mixed_ids")]))
    a.expect("ready")
    results, _, _ = a.run_phase(1, {0: [[0, {"document": {"_id": "s-1", "v": 1}}], [0, {"document": {"v": 2}}],
                                        [1, {"filter": {}}]]})
    a.send({"type": "exit"})
    assert a.wait() == 0
    assert [(r[4], r[5]) for r in results] == [(1, None), (1, None), (2, None)]
    ids = sorted((type(d["_id"]).__name__, d["v"]) for d in db.mixed_ids.find())
    assert ids == [("ObjectId", 2), ("str", 1)]
