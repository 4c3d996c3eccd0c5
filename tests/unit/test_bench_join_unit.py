"""The join benchmark's numpy reference against a pair-by-pair count (no Spark)."""

from __future__ import annotations

from funke.bench.join import BASE_MS, CHECKSUM_MOD, JITTER, LOWER_MS, UPPER_MS, reference


def test_reference_counts_and_checksums_exactly_the_pairs_within_the_interval():
    events, keys = 3_000, 7
    t = {side: [BASE_MS + i - ((i * m) % mod) for i in range(events)] for side, (m, mod) in JITTER.items()}
    pairs = [
        (a, b)
        for a in range(events)
        for b in range(max(0, a - 2_000), min(events, a + 2_000))
        if a % keys == b % keys and LOWER_MS <= t["bid"][b] - t["auction"][a] <= UPPER_MS
    ]
    assert len(pairs) > events / 2
    assert reference(events, keys) == (len(pairs), sum((a * 1_000_003 + b) % CHECKSUM_MOD for a, b in pairs))
