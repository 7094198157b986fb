"""Tests of the configuration's documentation (the keys themselves are tested in tests/config/test_keys.py)."""
