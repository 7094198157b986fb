"""Tests of the configuration's documentation (the keys themselves are tested in tests/test_config.py)."""
