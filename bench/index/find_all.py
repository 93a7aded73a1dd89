"""simhash-pybind's find_all on a benchmark dataset (bench/index/data.ts format).

    python find_all.py DATA PASSES BLOCKS...

Times only the find_all call (input already a set of Python ints), median
over PASSES runs for each block count; prints one JSON object.
"""
import json
import statistics
import struct
import sys
import time

import simhash


def main() -> None:
    path, passes = sys.argv[1], int(sys.argv[2])
    blocks_list = [int(b) for b in sys.argv[3:]] or [4, 5, 6]
    with open(path, "rb") as f:
        magic, n, _q, _ = struct.unpack("<4I", f.read(16))
        assert magic == 0x44424853, "not a benchmark dataset"
        words = struct.unpack(f"<{2 * n}I", f.read(8 * n))
    hashes = {(words[2 * i] << 32) | words[2 * i + 1] for i in range(n)}
    runs = {}
    pairs = {}
    for blocks in blocks_list:
        times = []
        for _ in range(passes):
            t0 = time.perf_counter()
            found = simhash.find_all(hashes, blocks, 3)
            times.append((time.perf_counter() - t0) * 1e3)
        runs[blocks] = times
        pairs[blocks] = len(found)
    best = min(runs, key=lambda b: statistics.median(runs[b]))
    print(json.dumps({
        "impl": "simhash-pybind find_all",
        "version": getattr(simhash, "__version__", None),
        "n": n,
        "distinct": len(hashes),
        "k": 3,
        "bestBlocks": best,
        "medianMs": round(statistics.median(runs[best])),
        "byBlocks": {str(b): {"medianMs": round(statistics.median(t)), "timesMs": [round(x) for x in t], "pairs": pairs[b]} for b, t in runs.items()},
        "pairs": pairs[best],
    }))


if __name__ == "__main__":
    main()
