"""The MongoEngine classes adapter.py generates from a SCHEMA, checked
without a server: what each type maps to and what a stored document turns
into (to_mongo is what save() sends)."""

from __future__ import annotations

import datetime
import pathlib
import sys

import mongoengine as me
import pytest
from bson import ObjectId
from bson.decimal128 import Decimal128
from bson.int64 import Int64

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
import adapter  # noqa: E402


def build(name, fields, indexes=None):
    return adapter.build_document({"name": name, "schema": {"fields": fields}, "indexes": indexes or []})


def test_types_map_to_fields():
    cls = build("typed", {
        "_id": {"type": "objectId"}, "s": {"type": "string"}, "i": {"type": "int"}, "l": {"type": "long"},
        "d": {"type": "double"}, "m": {"type": "decimal"}, "b": {"type": "bool"}, "t": {"type": "date"},
        "bin": {"type": "binary"}, "o": {"type": "object", "fields": {"c": {"type": "string"}}},
        "e": {"type": "object", "fields": {}}, "a": {"type": "array", "items": {"type": "int"}},
        "x": {"type": "mixed"}, "z": {"type": "null"},
    })
    f = cls._fields
    want = {"id": me.ObjectIdField, "s": me.StringField, "i": me.IntField, "l": me.LongField, "d": me.FloatField,
            "m": me.Decimal128Field, "b": me.BooleanField, "t": me.DateTimeField, "bin": me.BinaryField,
            "o": me.EmbeddedDocumentField, "e": me.DictField, "a": me.ListField, "x": me.DynamicField,
            "z": me.DynamicField}
    for name, field_type in want.items():
        assert type(f[name]) is field_type, name
    assert type(f["a"].field) is me.IntField
    assert cls._meta["collection"] == "typed"
    assert cls._meta["auto_create_index"] is False and cls._meta["strict"] is False


def test_stored_form_keeps_bson_types():
    cls = build("stored", {"_id": {"type": "objectId"}, "l": {"type": "long"}, "i": {"type": "int"},
                           "m": {"type": "decimal"}, "t": {"type": "date"}})
    oid = ObjectId()
    at = datetime.datetime(2024, 5, 6, 7, 8, 9, tzinfo=datetime.timezone.utc)
    doc = cls(id=oid, l=Int64(5), i=5, m=Decimal128("1.10"), t=at)
    doc.validate()
    son = doc.to_mongo()
    assert son["_id"] == oid
    assert type(son["l"]) is Int64 and type(son["i"]) is int
    assert son["m"] == Decimal128("1.10")
    # MongoEngine keeps the aware datetime; BSON stores the instant in UTC.
    assert son["t"] == at


def test_reserved_and_odd_names_get_db_fields():
    cls = build("odd", {"_id": {"type": "string"}, "id": {"type": "int"}, "objects": {"type": "int"},
                        "meta": {"type": "int"}, "a-b": {"type": "int"}, "_x": {"type": "int"},
                        "class": {"type": "int"}})
    by_db = {f.db_field: name for name, f in cls._fields.items()}
    assert by_db["_id"] == "id" and cls._meta["id_field"] == "id"
    for name in ("id", "objects", "meta", "a-b", "_x", "class"):
        assert by_db[name] != name and by_db[name].isidentifier(), name


@pytest.mark.parametrize("name", ["a.b", "$x"])
def test_unusable_field_names_are_init_errors(name):
    with pytest.raises(adapter.InitError, match="cannot be a MongoEngine field name"):
        build("bad", {name: {"type": "int"}})


def test_unknown_type_is_an_init_error():
    with pytest.raises(adapter.InitError, match="'n'.*unknown type 'complex'"):
        build("bad2", {"n": {"type": "complex"}})


def test_indexes_become_meta_specs():
    cls = build("ix", {"a": {"type": "int"}, "b": {"type": "string"}},
                [{"keys": {"a": 1, "b": -1}, "options": {"unique": True, "name": "ab"}},
                 {"keys": {"b": "hashed"}, "options": {}}])
    assert cls._meta["index_specs"][0]["fields"] == [("a", 1), ("b", -1)]
    assert cls._meta["index_specs"][0]["unique"] is True
    assert cls._meta["index_specs"][1]["fields"] == [("b", "hashed")]
