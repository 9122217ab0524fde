"""The harness behind ``asyncpool bench`` (private: the command line is its interface).

It ships in the wheel so that ``asyncpool bench`` works from a regular install; the
repository's top-level ``benchmarks/`` holds micro-benchmarks only and is not installed (a
top-level package of that name would shadow every other project's).
"""
