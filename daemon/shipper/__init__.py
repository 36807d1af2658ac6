"""The casino floor feed: the table's journal shipped to NATS JetStream (docs/floor.md)."""
