"""The client's own copy of the verdict.v1 stubs (`make protos`; never edit)."""
