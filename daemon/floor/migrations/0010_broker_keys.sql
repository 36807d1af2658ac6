-- The broker identity of each enrolled table (issue 21): the public key of the nkey it signs in
-- to NATS with (`tabled feed nkey` on the table prints it; `tabled floor broker-key` records it,
-- as a floor admin, in floor_actions). `tabled floor broker-config` writes the broker's accounts
-- from it. Not the table's journal signing key (table_keys): one key, one purpose.
CREATE TABLE broker_keys (
    table_id text        PRIMARY KEY REFERENCES enrolled_tables (table_id),
    nkey     text        NOT NULL UNIQUE CHECK (nkey ~ '^U[A-Z2-7]{55}$'),
    added_by text        NOT NULL,
    added_at timestamptz NOT NULL DEFAULT now()
);
