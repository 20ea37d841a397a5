#!/usr/bin/env python3
# An application that is not mongobench: a shop's order service (pymongo),
# with a fixed seed so that what it did is known. Usage: capture-app.py URI
# [OPERATIONS] (300 by default, after the 200 orders it inserts). It prints
# how many operations of each kind it ran, as JSON. Used by the test
# TestRecordPythonApplication and by scripts/capture-fidelity, which runs
# 3,000: a shape's captured p50 is the median of its count of operations,
# and at 300 the rarest shape (deleteOne, 5%) has about 15.
import json, random, sys
from pymongo import MongoClient

client = MongoClient(sys.argv[1], serverSelectionTimeoutMS=30000)
orders = client["shopapp"]["orders"]
rng = random.Random(7)
statuses = ["new", "paid", "sent"]
counts = {"insert": 0, "findOne": 0, "find": 0, "updateOne": 0, "deleteOne": 0, "aggregate": 0}

orders.insert_many([{"_id": i, "customer": "c%d" % (i % 20), "status": rng.choice(statuses),
                     "qty": rng.randint(1, 50)} for i in range(200)])
counts["insert"] += 1

operations = int(sys.argv[2]) if len(sys.argv) > 2 else 300
for i in range(operations):
    r = rng.random()
    if r < 0.4:
        orders.find_one({"_id": rng.randrange(200)})
        counts["findOne"] += 1
    elif r < 0.65:
        list(orders.find({"status": rng.choice(statuses), "qty": {"$gt": rng.randint(1, 40)}},
                         {"_id": 0, "qty": 1, "status": 1}).sort("qty", -1).limit(10))
        counts["find"] += 1
    elif r < 0.85:
        orders.update_one({"_id": rng.randrange(200)}, {"$inc": {"qty": 1}})
        counts["updateOne"] += 1
    elif r < 0.9:
        orders.delete_one({"_id": 1000 + i})
        counts["deleteOne"] += 1
    else:
        list(orders.aggregate([{"$match": {"status": rng.choice(statuses)}},
                               {"$group": {"_id": "$customer", "total": {"$sum": "$qty"}}},
                               {"$sort": {"total": -1}}, {"$limit": 5}]))
        counts["aggregate"] += 1

client.close()
print(json.dumps(counts))
