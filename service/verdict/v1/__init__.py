"""Generated protobuf and gRPC stubs for verdict.v1. Regenerate with `make protos`; never edit."""
