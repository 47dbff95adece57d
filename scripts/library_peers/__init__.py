"""The library example written by hand, as a team would without the toolkit: the peers of
scripts/bench_servers.py. The same three operations, the same data, the same auth rule."""
