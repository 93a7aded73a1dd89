"""Python peers on the same pages, each fed as its README says it is meant to be used.

usage: peers.py <peer> <texts.jsonl> <runs>
  peer = 1e0ng   : simhash 2.1.2 (1e0ng/leonsim), Simhash(text) -> its own regex + char 4-grams + md5
  peer = pybind  : simhash-pybind 0.0.3 (seomoz simhash-py API): lower-cased \\W+ tokens,
                   shingle(window=4), unsigned_hash (md5) per shingle, compute() in C++
Input: one JSON string per line = the page's extracted content text (both peers take text, not HTML).
Prints JSON {peer, pages, runs: [seconds...]} after one warm-up pass.
"""
import json
import re
import sys
import time

peer, path, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
texts = [json.loads(line) for line in open(path, encoding="utf-8")]

if peer == "1e0ng":
    from simhash import Simhash

    def one(text):
        return Simhash(text).value

elif peer == "pybind":
    import simhash

    SPLIT = re.compile(r"\W+")

    def one(text):
        tokens = SPLIT.split(text.lower())
        shingles = ("".join(s) for s in simhash.shingle(tokens, 4))
        return simhash.compute([simhash.unsigned_hash(s.encode("utf-8")) for s in shingles])

else:
    raise SystemExit(f"unknown peer {peer}")

for t in texts:
    one(t)
times = []
for _ in range(runs):
    start = time.perf_counter()
    for t in texts:
        one(t)
    times.append(time.perf_counter() - start)
print(json.dumps({"peer": peer, "pages": len(texts), "runs": times}))
