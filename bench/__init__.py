"""Benchmarks: ratios measured within one run (never absolute times, which say more about the machine than the code).

`python -m bench` runs every `bench_*` module here; pytest never collects them (they are not under tests/).
"""
