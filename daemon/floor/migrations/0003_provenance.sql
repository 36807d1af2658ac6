-- Provenance (issue 21): which tables the floor knows and the keys their heads are signed with,
-- the signed heads received, lines waiting for a head to prove them, and the quarantine of
-- what did not come from its table. docs/floor-service.md, "Provenance".

-- The registry: a table the floor takes lines from. Made by `tabled floor enrol` (a floor admin).
CREATE TABLE enrolled_tables (
    table_id    text        PRIMARY KEY CHECK (table_id ~ '^[A-Za-z0-9_-]{1,64}$'),
    game        text,
    pit         text,
    enrolled_by text        NOT NULL,
    enrolled_at timestamptz NOT NULL DEFAULT now()
);

-- A table's public keys. A head of seq S verifies with a key whose from_seq <= S and
-- (until_seq IS NULL OR S <= until_seq) and that is not revoked. A rotation (a journal line
-- `table.key_rotated` signed by the old key, proven at seq R) retires the old key at R and adds
-- the new one from R+1; a re-enrolment (a lost key, two floor admins) revokes the old keys and
-- adds the new one from the seq after the last proven line.
CREATE TABLE table_keys (
    id          bigserial   PRIMARY KEY,
    table_id    text        NOT NULL REFERENCES enrolled_tables (table_id),
    public_key  text        NOT NULL,
    fingerprint text        NOT NULL,
    from_seq    bigint      NOT NULL DEFAULT 1,
    until_seq   bigint,
    status      text        NOT NULL CHECK (status IN ('active', 'retired', 'revoked')),
    via         text        NOT NULL CHECK (via IN ('enrol', 're-enrol', 'rotation')),
    added_by    text        NOT NULL,
    approved_by text,
    added_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (table_id, public_key)
);

-- A re-enrolment asked by one floor admin, waiting for a second one.
CREATE TABLE enrol_requests (
    table_id     text        NOT NULL,
    public_key   text        NOT NULL,
    fingerprint  text        NOT NULL,
    game         text,
    pit          text,
    requested_by text        NOT NULL,
    requested_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, public_key)
);

-- Heads that verified: (table, seq) is proven to have this hash.
CREATE TABLE signed_heads (
    table_id    text        NOT NULL,
    seq         bigint      NOT NULL,
    hash        bytea       NOT NULL,
    key_id      bigint      NOT NULL REFERENCES table_keys (id),
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, seq)
);

-- Lines of an enrolled table not yet proven (their head has not come): never in the table's
-- history, never counted. Two lines may wait at one seq (a forgery and the table's own).
CREATE TABLE pending_lines (
    table_id    text        NOT NULL,
    seq         bigint      NOT NULL,
    hash        bytea       NOT NULL,
    prev        bytea       NOT NULL,
    line        bytea       NOT NULL,
    subject     text        NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, seq, hash)
);

-- What did not come from its table, kept as evidence.
CREATE TABLE quarantine (
    id          bigserial   PRIMARY KEY,
    table_id    text        NOT NULL,  -- as the subject names it (cut to 64 characters)
    seq         bigint,
    kind        text        NOT NULL,  -- unknown_table | forged | malformed
    reason      text        NOT NULL,
    subject     text        NOT NULL,
    hash        text,                  -- SHA-256 of the message body
    body        bytea       NOT NULL,  -- the message (cut to 64 KiB)
    bytes       integer     NOT NULL,  -- its whole size
    alert_id    bigint,
    received_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX quarantine_table ON quarantine (table_id, received_at);

ALTER TABLE chain_alerts DROP CONSTRAINT chain_alerts_kind_check;
ALTER TABLE chain_alerts ADD CONSTRAINT chain_alerts_kind_check
    CHECK (kind IN ('gap', 'fork', 'broken_link', 'malformed', 'unknown_table', 'forged'));
