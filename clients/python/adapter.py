"""mongobench's client adapter for Python stacks (client protocol version 1).

mongobench starts this script once per trial and target and speaks JSON
Lines with it: requests on stdin, replies on stdout, a log on stderr. The
adapter runs the operations mongobench generated through a real Python
stack (PyMongo, or MongoEngine on top of PyMongo) and reports how long each
whole call took, as the application would pay it. See docs/clients.md.

Threads, not processes: the workers of a phase are threads of one
interpreter, as in a threaded application server, so they share the GIL.
A stdin reader thread and a stdout writer thread keep the protocol's I/O
out of the timed calls.
"""

from __future__ import annotations

import argparse
import collections
import json
import keyword
import os
import platform
import queue
import re
import signal
import sys
import threading
import time
import urllib.parse

PROTOCOL = 1
STACKS = ("python-pymongo", "python-mongoengine")

# How often results are sent while a phase runs (the protocol asks for at
# least every 100 ms).
FLUSH_INTERVAL_S = 0.05

# Longest error message passed on; a server's error can quote whole
# documents, and the results file only needs enough to tell errors apart.
MAX_MESSAGE = 500

# Operation kinds of the protocol: exactly those mongobench sends
# (clients/protocol/schema.json). A kind outside this list is refused at init
# with a fatal naming it, so that a peer sending more learns so at once
# rather than from a half-run phase.
KINDS = (
    "insertOne", "insertMany", "findOne", "find", "countDocuments", "aggregate",
    "updateOne", "updateMany", "replaceOne", "deleteOne", "deleteMany",
)


class InitError(Exception):
    """A reason the adapter cannot run the workload; sent as `fatal`."""


class Unsupported(Exception):
    """An operation argument the stack cannot express, raised per call."""


# --------------------------------------------------------------------------
# Protocol I/O


class Writer:
    """Writes protocol lines to stdout from one thread, in the order they
    were queued, so that workers and the flusher never block on a pipe."""

    def __init__(self, stream):
        self._stream = stream
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name="writer", daemon=True)
        self._thread.start()

    def send(self, msg: dict) -> None:
        self._queue.put(json.dumps(msg, separators=(",", ":")) + "\n")

    def close(self) -> None:
        """Writes everything queued so far, then stops the thread."""
        self._queue.put(None)
        self._thread.join()

    def _loop(self) -> None:
        while True:
            line = self._queue.get()
            if line is None:
                return
            try:
                self._stream.write(line)
                # Flush when the queue is empty, so that a burst of lines
                # goes out in one write but nothing waits behind it.
                if self._queue.empty():
                    self._stream.flush()
            except (BrokenPipeError, OSError):
                # mongobench went away; nobody is left to read, and the
                # reader sees EOF and ends the process.
                return


def log(msg: str) -> None:
    """Writes one line to the adapter's log (stderr, captured by mongobench)."""
    print(f"adapter: {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# Extended JSON


def make_ejson():
    """Returns the canonical Extended JSON decoder, imported lazily so that
    a missing dependency becomes a `fatal` line instead of a traceback."""
    from bson import json_util

    def loads(text: str):
        return json_util.loads(text, json_options=json_util.CANONICAL_JSON_OPTIONS)

    return loads


# --------------------------------------------------------------------------
# Errors


def error_chain(exc: BaseException):
    """Yields exc and the exceptions it was raised from or during.
    MongoEngine re-raises driver errors as its own (NotUniqueError for a
    duplicate key), keeping the driver's error only as the context."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def classify(exc: BaseException, redact) -> dict:
    """Turns an exception raised by a stack call into the protocol's ERR.

    The name is the class the application sees (MongoEngine's NotUniqueError,
    PyMongo's DuplicateKeyError); code, labels and the network and timeout
    flags come from the driver error underneath, if any."""
    from pymongo import errors as pe

    driver = next((e for e in error_chain(exc) if isinstance(e, pe.PyMongoError)), None)
    code = None
    labels: list = []
    network = timeout = False
    if driver is not None:
        if isinstance(driver, pe.BulkWriteError):
            write_errors = (driver.details or {}).get("writeErrors") or []
            code = write_errors[0].get("code") if write_errors else driver.code
        elif isinstance(driver, pe.OperationFailure):
            code = driver.code
        labels = sorted(getattr(driver, "_error_labels", ()) or ())
        timeout = bool(driver.timeout)
        # NotPrimaryError is a server's answer, not a broken connection,
        # although PyMongo files it under AutoReconnect.
        network = isinstance(driver, pe.ConnectionFailure) and not isinstance(driver, pe.NotPrimaryError)
    message = redact(" ".join(str(exc).split()))
    if len(message) > MAX_MESSAGE:
        message = message[: MAX_MESSAGE - 3] + "..."
    return {
        "code": int(code) if code is not None else None,
        "name": type(exc).__name__,
        "message": message,
        "labels": labels,
        "network": network,
        "timeout": timeout,
    }


def docs_of_error(exc: BaseException) -> int:
    """Documents a failed write still wrote: an unordered or partly done
    insertMany reports how many went in."""
    from pymongo import errors as pe

    for e in error_chain(exc):
        if isinstance(e, pe.BulkWriteError):
            return int((e.details or {}).get("nInserted", 0))
    return 0


def make_redactor(uri: str):
    """Returns a function that hides the URI's password in a message, so that
    no error text mongobench records can carry a secret."""
    secrets = []
    try:
        parts = urllib.parse.urlsplit(uri)
        if parts.password:
            secrets += [parts.password, urllib.parse.unquote(parts.password)]
    except ValueError:
        pass
    secrets = sorted({s for s in secrets if s}, key=len, reverse=True)

    def redact(text: str) -> str:
        for s in secrets:
            text = text.replace(s, "xxxxx")
        return text

    return redact


# --------------------------------------------------------------------------
# Options shared by both stacks

READ_PREFERENCES = ("primary", "primaryPreferred", "secondary", "secondaryPreferred", "nearest")


def read_preference(name):
    """Maps the protocol's read preference name to PyMongo's object."""
    if name is None:
        return None
    from pymongo import ReadPreference

    table = {
        "primary": ReadPreference.PRIMARY,
        "primaryPreferred": ReadPreference.PRIMARY_PREFERRED,
        "secondary": ReadPreference.SECONDARY,
        "secondaryPreferred": ReadPreference.SECONDARY_PREFERRED,
        "nearest": ReadPreference.NEAREST,
    }
    if name not in table:
        raise InitError(f"unknown read preference {name!r} (one of {', '.join(READ_PREFERENCES)})")
    return table[name]


def write_concern_doc(wc):
    """Returns the write concern as keyword arguments (w, j, wtimeout), or
    None for the client's default."""
    if not wc:
        return None
    out = {}
    if wc.get("w") is not None:
        w = wc["w"]
        out["w"] = w if isinstance(w, str) else int(w)
    if wc.get("j") is not None:
        out["j"] = bool(wc["j"])
    for key in ("wtimeout", "wtimeout_ms", "wtimeoutMS"):
        if wc.get(key) is not None:
            out["wtimeout"] = int(wc[key])
    return out or None


def upsert(args: dict) -> bool:
    """Whether an update or replacement inserts when nothing matches (the
    operation's upsert, sent with each call's arguments)."""
    return bool(args.get("upsert", False))


def count_arg(args: dict, name: str) -> int:
    """Returns a numeric argument (limit, skip, batch_size) or 0 if absent."""
    v = args.get(name)
    return int(v) if v is not None else 0


# --------------------------------------------------------------------------
# PyMongo


class PyMongoStack:
    """Runs each kind as the PyMongo call of the same name."""

    name = "python-pymongo"

    def __init__(self, init: dict):
        import pymongo

        self._client = pymongo.MongoClient(init["uri"], **client_options(init))
        self._db = self._client[init["database"]]

    def ping(self) -> None:
        self._db.command("ping")

    def versions(self) -> dict:
        import pymongo

        return {"python": platform.python_version(), "pymongo": pymongo.__version__}

    def close(self) -> None:
        self._client.close()

    def bind(self, op: dict):
        """Returns the function that runs op once with its arguments and
        returns the documents it returned or wrote."""
        from pymongo import WriteConcern

        kind = op["kind"]
        coll = self._db[op["collection"]] if op.get("collection") else None
        wc = write_concern_doc(op.get("write_concern"))
        rp = read_preference(op.get("read_preference"))
        if coll is not None and (wc is not None or rp is not None):
            coll = coll.with_options(
                write_concern=WriteConcern(**wc) if wc is not None else None,
                read_preference=rp,
            )
        def insert_one(a):
            coll.insert_one(a["document"])
            return 1

        def insert_many(a):
            ordered = a.get("ordered")
            res = coll.insert_many(a["documents"], ordered=True if ordered is None else bool(ordered))
            return len(res.inserted_ids)

        def find_kwargs(a, many):
            kw = {}
            if a.get("projection") is not None:
                kw["projection"] = a["projection"]
            if a.get("sort") is not None:
                kw["sort"] = list(a["sort"].items())
            if count_arg(a, "skip"):
                kw["skip"] = count_arg(a, "skip")
            if many:
                if count_arg(a, "limit"):
                    kw["limit"] = count_arg(a, "limit")
                if count_arg(a, "batch_size"):
                    kw["batch_size"] = count_arg(a, "batch_size")
            return kw

        def find_one(a):
            return 0 if coll.find_one(a.get("filter") or {}, **find_kwargs(a, False)) is None else 1

        def find(a):
            return len(list(coll.find(a.get("filter") or {}, **find_kwargs(a, True))))

        def count_documents(a):
            kw = {k: count_arg(a, k) for k in ("skip", "limit") if count_arg(a, k)}
            coll.count_documents(a.get("filter") or {}, **kw)
            return 0

        def aggregate(a):
            kw = {"batchSize": count_arg(a, "batch_size")} if count_arg(a, "batch_size") else {}
            return len(list(coll.aggregate(a.get("pipeline") or [], **kw)))

        def updated(res):
            return res.modified_count + (1 if res.upserted_id is not None else 0)

        def update_one(a):
            return updated(coll.update_one(a.get("filter") or {}, a["update"], upsert=upsert(a)))

        def update_many(a):
            return updated(coll.update_many(a.get("filter") or {}, a["update"], upsert=upsert(a)))

        def replace_one(a):
            return updated(coll.replace_one(a.get("filter") or {}, a["replacement"], upsert=upsert(a)))

        def delete_one(a):
            return coll.delete_one(a.get("filter") or {}).deleted_count

        def delete_many(a):
            return coll.delete_many(a.get("filter") or {}).deleted_count

        table = {
            "insertOne": insert_one, "insertMany": insert_many, "findOne": find_one, "find": find,
            "countDocuments": count_documents, "aggregate": aggregate, "updateOne": update_one,
            "updateMany": update_many, "replaceOne": replace_one, "deleteOne": delete_one,
            "deleteMany": delete_many,
        }
        if coll is None:
            raise InitError(f"operation {op.get('name')!r} ({kind}) names no collection")
        return table[kind]


def client_options(init: dict) -> dict:
    """Client options from init: timeout_ms bounds every operation (PyMongo's
    client-side operation timeout) and the wait for a usable server."""
    opts = {"appname": "mongobench-python"}
    timeout_ms = init.get("timeout_ms")
    if timeout_ms:
        opts["timeoutMS"] = int(timeout_ms)
        opts["serverSelectionTimeoutMS"] = int(timeout_ms)
    return opts


# --------------------------------------------------------------------------
# MongoEngine


class MongoEngineStack:
    """Runs each kind as MongoEngine's idiomatic call on a Document class
    generated from the collection's schema."""

    name = "python-mongoengine"

    def __init__(self, init: dict):
        import mongoengine

        self._alias = "default"
        mongoengine.connect(
            db=init["database"], host=init["uri"], alias=self._alias,
            uuidRepresentation="standard", **client_options(init),
        )
        self._models = {}
        for c in init.get("collections") or []:
            self._models[c["name"]] = build_document(c)

    def ping(self) -> None:
        from mongoengine.connection import get_db

        get_db(self._alias).command("ping")

    def versions(self) -> dict:
        import mongoengine
        import pymongo

        return {
            "python": platform.python_version(),
            "pymongo": pymongo.__version__,
            "mongoengine": mongoengine.__version__,
        }

    def close(self) -> None:
        from mongoengine.connection import disconnect

        disconnect(self._alias)

    def bind(self, op: dict):
        kind = op["kind"]
        name = op.get("name")
        if kind == "replaceOne":
            raise InitError(f"operation {name!r} ({kind}): python-mongoengine cannot express {kind} "
                            "(MongoEngine's QuerySet has no replace)")
        model = self._models.get(op.get("collection"))
        if model is None:
            raise InitError(f"operation {name!r} ({kind}): collection {op.get('collection')!r} has no schema in init")
        wc = write_concern_doc(op.get("write_concern"))
        rp = read_preference(op.get("read_preference"))

        # A new Document takes attribute names (id, not _id), so a stored
        # document's top-level keys are renamed; nested documents are built
        # from their stored form by MongoEngine itself.
        db_to_attr = {f.db_field: name for name, f in model._fields.items()}

        def attrs_of(d):
            return {db_to_attr.get(k, k): v for k, v in d.items()}

        def objects(a):
            qs = model.objects(__raw__=a.get("filter") or {})
            if rp is not None:
                qs = qs.read_preference(rp)
            return qs

        def shaped(a, many):
            qs = objects(a)
            if a.get("projection"):
                qs = project(qs, model, a["projection"])
            if a.get("sort"):
                qs = qs.order_by(__raw__=list(a["sort"].items()))
            if count_arg(a, "skip"):
                qs = qs.skip(count_arg(a, "skip"))
            if many:
                if count_arg(a, "limit"):
                    qs = qs.limit(count_arg(a, "limit"))
                if count_arg(a, "batch_size"):
                    qs = qs.batch_size(count_arg(a, "batch_size"))
            return qs

        def insert_one(a):
            # save() on a document whose _id is set is an upsert (a
            # find_one_and_replace, then an insert); force_insert makes it
            # the single insert the kind means, with duplicate key errors.
            model(**attrs_of(a["document"])).save(force_insert=True, write_concern=wc)
            return 1

        def insert_many(a):
            if a.get("ordered") is False:
                raise Unsupported("MongoEngine's QuerySet.insert has no ordered option")
            # load_bulk=False: the default re-reads every inserted document
            # with a second query, which is not the kind's single write.
            ids = model.objects.insert([model(**attrs_of(d)) for d in a["documents"]], load_bulk=False,
                                       write_concern=wc)
            return len(ids)

        def find_one(a):
            return 0 if shaped(a, False).first() is None else 1

        def find(a):
            return len(list(shaped(a, True)))

        def count_documents(a):
            qs = objects(a)
            if count_arg(a, "skip"):
                qs = qs.skip(count_arg(a, "skip"))
            if count_arg(a, "limit"):
                qs = qs.limit(count_arg(a, "limit"))
            qs.count(with_limit_and_skip=True)
            return 0

        def aggregate(a):
            kw = {"batchSize": count_arg(a, "batch_size")} if count_arg(a, "batch_size") else {}
            qs = model.objects.read_preference(rp) if rp is not None else model.objects
            return len(list(qs.aggregate(a.get("pipeline") or [], **kw)))

        def updated(res):
            return res.modified_count + (1 if res.upserted_id is not None else 0)

        def update_one(a):
            return updated(objects(a).update_one(upsert=upsert(a), write_concern=wc, full_result=True,
                                                 __raw__=a["update"]))

        def update_many(a):
            return updated(objects(a).update(upsert=upsert(a), multi=True, write_concern=wc, full_result=True,
                                             __raw__=a["update"]))

        def delete_one(a):
            # MongoEngine deletes one document by loading it and deleting it
            # by _id (limit(1).delete() does exactly that): two round trips.
            return objects(a).limit(1).delete(write_concern=wc)

        def delete_many(a):
            return objects(a).delete(write_concern=wc)

        return {
            "insertOne": insert_one, "insertMany": insert_many, "findOne": find_one, "find": find,
            "countDocuments": count_documents, "aggregate": aggregate, "updateOne": update_one,
            "updateMany": update_many, "deleteOne": delete_one, "deleteMany": delete_many,
        }[kind]


def project(qs, model, projection: dict):
    """Applies a projection as MongoEngine's only() or exclude(). Operators
    ($slice, $elemMatch, ...) have no idiomatic form and are refused."""
    include, exclude = [], []
    for path, v in projection.items():
        if isinstance(v, dict):
            raise Unsupported(f"projection of {path!r} uses an operator MongoEngine's only()/exclude() cannot express")
        attr = attr_path(model, path)
        (include if v else exclude).append(attr)
    if include:
        qs = qs.only(*include)
    if exclude:
        qs = qs.exclude(*exclude)
    return qs


def attr_path(model, path: str) -> str:
    """Translates a stored field path (a.b.c) to the attribute path that
    MongoEngine's field selection takes, following generated classes."""
    out = []
    cls = model
    for seg in path.split("."):
        attr = seg
        nxt = None
        if cls is not None:
            for fname, field in cls._fields.items():
                if field.db_field == seg:
                    attr = fname
                    nxt = embedded_class(field)
                    break
        out.append(attr)
        cls = nxt
    return ".".join(out)


def embedded_class(field):
    """The EmbeddedDocument class under field (directly or as list items)."""
    from mongoengine import EmbeddedDocumentField, ListField

    if isinstance(field, ListField) and field.field is not None:
        field = field.field
    if isinstance(field, EmbeddedDocumentField):
        return field.document_type
    return None


# Attribute names a generated class must not use for fields: those of
# MongoEngine's own Document and EmbeddedDocument (save, objects, pk, ...).
def reserved_names():
    import mongoengine

    return set(dir(mongoengine.Document)) | set(dir(mongoengine.EmbeddedDocument)) | {"id", "pk", "objects", "meta"}


IDENT = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


class SchemaBuilder:
    """Generates MongoEngine classes from the protocol's SCHEMA."""

    def __init__(self, collection: str):
        self.collection = collection
        self.reserved = reserved_names()
        self.count = 0

    def class_name(self, path: str) -> str:
        self.count += 1
        base = re.sub(r"[^A-Za-z0-9]", "_", f"{self.collection}_{path}" if path else self.collection)
        return f"MB{self.count}_{base}"

    def fields(self, spec: dict, path: str, top: bool) -> dict:
        attrs = {}
        for name, ftype in (spec.get("fields") or {}).items():
            where = f"{path}.{name}" if path else name
            if not name or name.startswith("$") or "." in name or "\0" in name:
                raise InitError(f"collection {self.collection!r}: field {where!r} cannot be a MongoEngine field name")
            if top and name == "_id":
                if ftype.get("type") == "objectId":
                    continue  # MongoEngine's own id field
                # A primary key is required in MongoEngine, but a workload
                # may insert documents without _id into a collection whose
                # loaded documents have, say, string ids; the driver then
                # adds an ObjectId, and so must this class let it.
                pk = self.field(ftype, where, primary_key=True)
                pk.required = False
                attrs["id"] = pk
                continue
            attr = name
            if not IDENT.match(name) or keyword.iskeyword(name) or name in self.reserved:
                attr = f"f{len(attrs)}_" + re.sub(r"[^A-Za-z0-9_]", "_", name).lstrip("_")
            attrs[attr] = self.field(ftype, where, db_field=name)
        return attrs

    def field(self, ftype: dict, where: str, **kw):
        import mongoengine as me

        t = ftype.get("type")
        simple = {
            "objectId": me.ObjectIdField, "string": me.StringField, "int": me.IntField,
            "long": me.LongField, "double": me.FloatField, "decimal": me.Decimal128Field,
            "bool": me.BooleanField, "date": me.DateTimeField, "binary": me.BinaryField,
            "null": me.DynamicField, "mixed": me.DynamicField,
        }
        if t in simple:
            return simple[t](**kw)
        if t == "object":
            if not ftype.get("fields"):
                return me.DictField(**kw)
            return me.EmbeddedDocumentField(self.embedded(ftype, where), **kw)
        if t == "array":
            items = ftype.get("items")
            if not items or items.get("type") in ("mixed", "null", None):
                return me.ListField(**kw)
            return me.ListField(self.field(items, where + "[]"), **kw)
        raise InitError(f"collection {self.collection!r}: field {where!r} has unknown type {t!r}")

    def embedded(self, spec: dict, path: str):
        import mongoengine as me

        attrs = self.fields(spec, path, False)
        attrs["meta"] = {"strict": False}
        return type(self.class_name(path), (me.EmbeddedDocument,), attrs)


def build_document(c: dict):
    """Returns the Document class for one collection of init."""
    import mongoengine as me

    b = SchemaBuilder(c["name"])
    attrs = b.fields(c.get("schema") or {}, "", True)
    meta = {
        "collection": c["name"],
        "auto_create_index": False,  # mongobench creates the indexes itself
        "strict": False,
        "indexes": [],
    }
    attrs["meta"] = meta
    name = b.class_name("")
    try:
        cls = type(name, (me.Document,), dict(attrs, meta=dict(meta, indexes=index_specs(c.get("indexes")))))
    except Exception as exc:  # an index on a path outside the schema
        log(f"collection {c['name']!r}: indexes left out of the class ({' '.join(str(exc).split())})")
        cls = type(name + "_", (me.Document,), attrs)
    return cls


def index_specs(indexes):
    """MongoEngine's meta index specs for the protocol's index list. They are
    descriptive only (auto_create_index is off) but keep the class what an
    application would declare."""
    prefix = {1: "+", -1: "-", "text": "$", "hashed": "#", "2dsphere": "(", "2d": "*"}
    out = []
    for ix in indexes or []:
        fields = []
        for k, v in ix["keys"].items():
            key = int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v
            if key not in prefix:
                raise ValueError(f"index key {k!r}: {v!r}")
            fields.append(prefix[key] + k)
        spec = {"fields": fields}
        for opt in ("unique", "sparse", "name"):
            if opt in (ix.get("options") or {}):
                spec[opt] = ix["options"][opt]
        out.append(spec)
    return out


# --------------------------------------------------------------------------
# Workers


class Worker:
    """One closed-loop worker: a thread that runs the operations of its own
    queue one after another and records each call's start and latency."""

    def __init__(self, index: int, phase: "Phase"):
        self.index = index
        self.phase = phase
        self.ops: collections.deque = collections.deque()
        self.results: collections.deque = collections.deque()
        self.cond = threading.Condition()
        self.batch = 0  # size of the last ops message
        self.need_sent = False
        self.fed = False  # received its first batch
        self.starved = 0
        self.profile = None
        self.thread = threading.Thread(target=self.run, name=f"worker-{index}", daemon=True)

    def feed(self, ops: list) -> None:
        with self.cond:
            self.ops.extend(ops)
            self.batch = max(len(ops), 1)
            self.need_sent = False
            self.fed = True
            self.cond.notify()

    def next_op(self):
        """Returns the next (operation id, args), or None when the phase
        stops. Asks for more at half a batch; waits (untimed) when empty."""
        ph = self.phase
        with self.cond:
            if not self.ops and self.fed and not ph.stopping:
                self.starved += 1
            while not self.ops:
                if ph.stopping:
                    return None
                if self.fed and not self.need_sent:
                    self.need_sent = True
                    ph.writer.send({"type": "need", "worker": self.index})
                self.cond.wait()
                if ph.stopping:
                    return None
            if ph.stopping:
                return None
            item = self.ops.popleft()
            if not self.need_sent and len(self.ops) <= self.batch // 2:
                self.need_sent = True
                ph.writer.send({"type": "need", "worker": self.index})
            return item

    def run(self) -> None:
        ph = self.phase
        bound = ph.bound
        t0 = ph.t0
        prof = self.profile
        perf = time.perf_counter_ns
        # The client's own time on the call (DECODE_NS, docs/clients.md):
        # this worker thread's CPU time while it ran, which the server's
        # time and the wait for the network do not add to.
        cpu = time.thread_time_ns
        out = self.results
        while True:
            item = self.next_op()
            if item is None:
                return
            opid, args = item[0], item[1] if len(item) > 1 and item[1] is not None else {}
            call = bound.get(opid)
            exc = None
            docs = 0
            if prof is not None:
                prof.enable()
            cpu0 = cpu()
            start = perf()
            try:
                if call is None:
                    raise Unsupported(f"unknown operation id {opid}")
                docs = call(args)
            except Exception as e:  # every failure of a call is a result
                exc = e
            end = perf()
            spent = cpu() - cpu0
            if prof is not None:
                prof.disable()
            err = None
            if exc is not None:
                try:
                    err = classify(exc, ph.redact)
                    docs = docs_of_error(exc)
                except Exception as bug:  # still a result, never a dead worker
                    err = {"code": None, "name": type(exc).__name__, "message": f"(unclassified: {bug})",
                           "labels": [], "network": False, "timeout": False}
                    docs = 0
            out.append([opid, start - t0, end - start, int(docs or 0), err, max(spent, 0)])


class Phase:
    """A measured phase: its workers, the flusher that sends their results,
    and the clock origin (when the phase message arrived)."""

    def __init__(self, t0: int, workers: int, bound: dict, writer: Writer, redact, profiles):
        self.t0 = t0
        self.bound = bound
        self.writer = writer
        self.redact = redact
        self.stopping = False
        self.workers = [Worker(i, self) for i in range(workers)]
        for w in self.workers:
            w.profile = profiles.for_worker(w.index) if profiles else None
        self._flush_stop = threading.Event()
        self._flusher = threading.Thread(target=self._flush_loop, name="flusher", daemon=True)

    def start(self) -> None:
        for w in self.workers:
            w.thread.start()
        self._flusher.start()

    def feed(self, worker: int, ops: list) -> None:
        if self.stopping:
            return  # sent before mongobench saw our stop; nothing to run
        if not 0 <= worker < len(self.workers):
            raise ValueError(f"ops for worker {worker}, but the phase has {len(self.workers)} workers")
        self.workers[worker].feed(ops)

    def flush(self) -> None:
        for w in self.workers:
            n = len(w.results)
            if n == 0:
                continue
            r = [w.results.popleft() for _ in range(n)]
            self.writer.send({"type": "done", "worker": w.index, "r": r})

    def _flush_loop(self) -> None:
        while not self._flush_stop.wait(FLUSH_INTERVAL_S):
            self.flush()

    def stop(self) -> int:
        """Issues no new operation, waits for those in flight, sends the
        remaining results and returns the starved count."""
        self.stopping = True
        for w in self.workers:
            with w.cond:
                w.cond.notify_all()
        for w in self.workers:
            w.thread.join()
        self._flush_stop.set()
        self._flusher.join()
        self.flush()
        return sum(w.starved for w in self.workers)


# --------------------------------------------------------------------------
# Profiling


class Profiles:
    """cProfile around the workers' timed calls, written at exit as
    PREFIX.pstats and PREFIX.top.json.

    On Python 3.11 a profiler hooks only the thread that enables it, so each
    worker gets its own Profile, enabled just around its calls, and the
    profiles are merged with pstats at the end. From Python 3.12 on, cProfile
    hooks every thread at once and only one can be active, so there one
    Profile runs for each whole phase (it then also sees the I/O threads)."""

    def __init__(self, prefix: str):
        self.prefix = prefix
        self.per_thread = sys.version_info < (3, 12)
        self.profiles = []
        self._phase_profile = None

    def for_worker(self, _index: int):
        if not self.per_thread:
            return None
        import cProfile

        p = cProfile.Profile()
        self.profiles.append(p)
        return p

    def phase_started(self) -> None:
        if not self.per_thread:
            import cProfile

            self._phase_profile = cProfile.Profile()
            self.profiles.append(self._phase_profile)
            self._phase_profile.enable()

    def phase_stopped(self) -> None:
        if self._phase_profile is not None:
            self._phase_profile.disable()
            self._phase_profile = None

    def write(self) -> None:
        import pstats

        self.phase_stopped()
        for p in self.profiles:
            p.create_stats()
        with_stats = [p for p in self.profiles if p.stats]
        if with_stats:
            stats = pstats.Stats(with_stats[0])
            for p in with_stats[1:]:
                stats.add(p)
        else:  # no call was made: an empty but valid profile
            import cProfile

            empty = cProfile.Profile()
            empty.create_stats()
            stats = pstats.Stats(empty)
        stats.dump_stats(self.prefix + ".pstats")
        with open(self.prefix + ".top.json", "w", encoding="utf-8") as f:
            json.dump(top_frames(stats.stats), f, indent=1)
            f.write("\n")


def top_frames(raw: dict, n: int = 30) -> dict:
    """The top n frames by self time ("frames") and by cumulative time
    ("frames_by_total"), in the protocol's shape."""

    def frame(key, val):
        (file, line, func), (_cc, nc, tt, ct, _callers) = key, val
        return {"function": func, "file": file, "line": line,
                "self_ms": round(tt * 1000, 3), "total_ms": round(ct * 1000, 3), "calls": nc}

    items = list(raw.items())
    by_self = sorted(items, key=lambda kv: kv[1][2], reverse=True)[:n]
    by_total = sorted(items, key=lambda kv: kv[1][3], reverse=True)[:n]
    return {"frames": [frame(k, v) for k, v in by_self],
            "frames_by_total": [frame(k, v) for k, v in by_total]}


# --------------------------------------------------------------------------
# Session


class Session:
    """The adapter's lifecycle: init, phases, exit."""

    def __init__(self, stack_name: str, writer: Writer):
        self.stack_name = stack_name
        self.writer = writer
        self.control: queue.SimpleQueue = queue.SimpleQueue()
        self.loads = None
        self.stack = None
        self.bound = {}
        self.phase = None
        self.phase_lock = threading.Lock()
        # Set once the control loop has handled init (ready or fatal). The
        # reader waits for it after passing init on: mongobench may send the
        # phase line right behind init without waiting for ready, and the
        # reader can make that phase only once the operations are bound.
        self.init_done = threading.Event()
        self.profiles = None
        self.redact = lambda s: s

    def fatal(self, message: str) -> int:
        self.writer.send({"type": "fatal", "message": self.redact(" ".join(str(message).split()))})
        return 1

    def read_loop(self, stream) -> None:
        """Reads stdin: ops go straight to their worker, the rest to the
        control loop. EOF ends the session like exit."""
        try:
            self._read(stream)
        except Exception as exc:  # a bug here must end the session, not hang it
            self.control.put(("bad", f"reading requests: {type(exc).__name__}: {exc}", time.perf_counter_ns()))

    def _read(self, stream) -> None:
        for line in stream:
            received = time.perf_counter_ns()
            if not line.strip():
                continue
            try:
                msg = self.loads(line.decode("utf-8"))
            except Exception as exc:
                self.control.put(("bad", f"unreadable request line: {exc}", received))
                continue
            if msg.get("type") == "init" and not self.init_done.is_set():
                self.control.put(("msg", msg, received))
                self.init_done.wait()
                continue
            if msg.get("type") == "phase" and self.stack is not None:
                # Made here, before the next line is read, so that the
                # phase's first ops find their workers' queues.
                with self.phase_lock:
                    if self.phase is None:
                        self.phase = self.new_phase(msg, received)
                        msg = dict(msg, _made=True)
            elif msg.get("type") == "stop":
                with self.phase_lock:
                    if self.phase is not None:
                        self.phase.stopping = True
            if msg.get("type") == "ops":
                with self.phase_lock:
                    ph = self.phase
                if ph is None:
                    continue
                try:
                    ph.feed(int(msg["worker"]), msg.get("ops") or [])
                except (KeyError, ValueError, TypeError) as exc:
                    self.control.put(("bad", f"bad ops message: {exc}", received))
                continue
            self.control.put(("msg", msg, received))
        self.control.put(("eof", None, time.perf_counter_ns()))

    def run(self, stdin) -> int:
        try:
            self.loads = make_ejson()
        except ImportError as exc:
            return self.fatal(f"the {self.stack_name} stack is not installed: {exc}")
        threading.Thread(target=self.read_loop, args=(stdin,), name="reader", daemon=True).start()

        what, msg, _ = self.control.get()
        if what != "msg" or msg.get("type") != "init":
            return self.fatal("expected an init message first")
        try:
            code = self.init(msg)
        finally:
            self.init_done.set()
        if code:
            return code

        while True:
            what, msg, received = self.control.get()
            if what == "eof":
                self.finish()
                return 0
            if what == "bad":
                self.finish()
                return self.fatal(msg)
            typ = msg.get("type")
            if typ == "phase":
                if not msg.get("_made"):
                    self.finish()
                    return self.fatal("phase while a phase is running (stop first)")
                self.start_phase()
            elif typ == "stop":
                starved = self.stop_phase()
                self.writer.send({"type": "stopped", "starved": starved})
            elif typ == "exit":
                self.finish()
                return 0
            else:
                self.finish()
                return self.fatal(f"unknown message type {typ!r}")

    def init(self, msg: dict) -> int:
        self.redact = make_redactor(msg.get("uri") or "")
        if msg.get("protocol") != PROTOCOL:
            return self.fatal(f"protocol {msg.get('protocol')!r} not supported (this adapter speaks {PROTOCOL})")
        if msg.get("stack") not in (None, self.stack_name):
            return self.fatal(f"init names stack {msg.get('stack')!r}, adapter started as {self.stack_name}")
        try:
            for op in msg.get("operations") or []:
                if op.get("kind") not in KINDS:
                    raise InitError(f"operation {op.get('name')!r}: kind {op.get('kind')!r} is not a protocol kind "
                                    f"(mongobench sends only {', '.join(KINDS)})")
            cls = PyMongoStack if self.stack_name == "python-pymongo" else MongoEngineStack
            self.stack = cls(msg)
            for op in msg.get("operations") or []:
                self.bound[int(op["id"])] = self.stack.bind(op)
            self.stack.ping()
        except InitError as exc:
            return self.fatal(str(exc))
        except ImportError as exc:
            return self.fatal(f"the {self.stack_name} stack is not installed: {exc}")
        except Exception as exc:  # no connection, bad URI, a schema MongoEngine refuses
            return self.fatal(f"{type(exc).__name__}: {exc}")
        if msg.get("profile"):
            self.profiles = Profiles(msg["profile"])
        self.writer.send({"type": "ready", "stack": self.stack_name, "versions": self.stack.versions()})
        return 0

    def new_phase(self, msg: dict, received: int) -> Phase:
        return Phase(received, int(msg.get("workers") or 1), self.bound, self.writer, self.redact, self.profiles)

    def start_phase(self) -> None:
        with self.phase_lock:
            ph = self.phase
        if self.profiles:
            self.profiles.phase_started()
        ph.start()

    def stop_phase(self) -> int:
        with self.phase_lock:
            ph, self.phase = self.phase, None
        if ph is None:
            return 0
        starved = ph.stop()
        if self.profiles:
            self.profiles.phase_stopped()
        return starved

    def finish(self) -> None:
        """Stops a running phase, closes the client and writes the profile."""
        self.stop_phase()
        if self.stack is not None:
            try:
                self.stack.close()
            except Exception as exc:
                log(f"closing the client: {exc}")
        if self.profiles:
            try:
                self.profiles.write()
            except OSError as exc:
                log(f"writing the profile: {exc}")


def stdin_lines(fd: int = 0):
    """Yields stdin's lines as bytes. It reads the file descriptor directly:
    a thread blocked in a buffered sys.stdin read holds the buffer's lock,
    and the interpreter aborts at exit when a daemon thread holds it."""
    pending = b""
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            if pending:
                yield pending
            return
        pending += chunk
        if b"\n" in pending:
            *lines, pending = pending.split(b"\n")
            yield from lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="mongobench client adapter for Python stacks")
    parser.add_argument("--stack", required=True, choices=STACKS)
    args = parser.parse_args(argv)
    # mongobench shuts the adapter down through the protocol (stop, exit, or
    # EOF when it dies). Ctrl-C in a terminal reaches the whole process
    # group; ignoring it here lets mongobench stop the phase in order
    # instead of losing the calls in flight to a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    writer = Writer(sys.stdout)
    try:
        code = Session(args.stack, writer).run(stdin_lines())
    finally:
        writer.close()
    return code


if __name__ == "__main__":
    sys.exit(main())
