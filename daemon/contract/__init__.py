"""The contract between the table's process and its API: the one door between the two rooms.

- `facade`: what the API asks of a running table (`TableFacade`), and the shapes it answers with
  (`ActionSpec`, `TableMetrics`, the console's `Snapshot`);
- `published`: the table's state as the table hands it over (`Published`), immutable text;
- `journal_feed`: the journal as the API reads it (the feed's records, the query);
- `channel`: the frames of the socket pair between the table's process and the API process;
- `metrics`: the latency accumulator the table keeps for `/metrics`.

It imports the game declarations (`daemon.procedures.spec`) and the journal's reading, never the
table (`daemon.table`) nor the API (`daemon.api`): both import it, neither imports the other
(tests/test_architecture.py holds that).
"""
