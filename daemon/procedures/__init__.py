"""One `transitions` state machine per game: states, triggers and guards as data."""
