-- The floor's store: every table's journal lines, and what the floor derives from them.
-- Applied once, in a transaction, by `tabled floor` at start (schema_migrations records it).

-- One row per journal line, keyed by (table, seq): the exact bytes, their SHA-256 and `prev`.
-- Partitioned by month of the line's wall time so a year of a large floor (~42 G lines, see
-- docs/floor-service.md) is twelve tables that can be detached and archived one by one. The
-- partition key has to be in the primary key; (table_id, seq) alone is kept unique by the
-- chain custody, which looks a seq up before it writes it (see store.py).
CREATE TABLE journal_lines (
    table_id  text        NOT NULL,
    seq       bigint      NOT NULL,
    ts        timestamptz NOT NULL,
    event     text        NOT NULL,
    round     text,
    actor     text        NOT NULL,
    hash      bytea       NOT NULL,
    prev      bytea       NOT NULL,
    line      bytea       NOT NULL,
    PRIMARY KEY (table_id, seq, ts)
) PARTITION BY RANGE (ts);
CREATE INDEX journal_lines_round ON journal_lines (table_id, round);

-- Each table as the floor sees it now; also the chain custody's head per table.
CREATE TABLE floor_tables (
    table_id          text PRIMARY KEY,
    game              text,
    phase             text,
    state             text        NOT NULL DEFAULT 'playing',  -- playing|held|tilted|stopped
    reason            text,
    round             text,
    last_seq          bigint      NOT NULL DEFAULT 0,   -- highest seq received
    head_hash         bytea,                            -- SHA-256 of line last_seq
    contiguous_seq    bigint      NOT NULL DEFAULT 0,   -- every seq 1..this is present
    last_event        text,
    last_ts           timestamptz,                      -- wall time of line last_seq
    received_at       timestamptz,                      -- when the floor committed it
    pending_overrides integer     NOT NULL DEFAULT 0,
    lines             bigint      NOT NULL DEFAULT 0
);

CREATE TABLE rounds (
    table_id   text        NOT NULL,
    round      text        NOT NULL,
    first_seq  bigint      NOT NULL,
    last_seq   bigint      NOT NULL,
    started_at timestamptz NOT NULL,
    ended_at   timestamptz,
    status     text        NOT NULL DEFAULT 'open',  -- open|settled|voided
    lines      integer     NOT NULL DEFAULT 0,
    PRIMARY KEY (table_id, round)
);
CREATE INDEX rounds_started ON rounds (started_at);

CREATE TABLE settlements (
    table_id text        NOT NULL,
    seq      bigint      NOT NULL,
    item     integer     NOT NULL,
    ts       timestamptz NOT NULL,
    round    text,
    seat     integer,
    player   text,
    amount   numeric,
    outcome  text,
    net      numeric,
    detail   jsonb       NOT NULL,
    PRIMARY KEY (table_id, seq, item)
);
CREATE INDEX settlements_ts ON settlements (ts);

CREATE TABLE violations (
    table_id text        NOT NULL,
    seq      bigint      NOT NULL,
    ts       timestamptz NOT NULL,
    round    text,
    actor    text        NOT NULL,
    article  text,
    action   text,
    phase    text,
    reason   text,
    PRIMARY KEY (table_id, seq)
);
CREATE INDEX violations_ts ON violations (ts);
CREATE INDEX violations_article ON violations (article, ts);
CREATE INDEX violations_actor ON violations (actor, ts);

CREATE TABLE overrides (
    table_id    text        NOT NULL,
    seq         bigint      NOT NULL,
    ts          timestamptz NOT NULL,
    round       text,
    status      text        NOT NULL,  -- proposed|approved|rejected
    kind        text,
    article     text,
    proposed_by text,
    decided_by  text,
    reason      text,
    PRIMARY KEY (table_id, seq)
);
CREATE INDEX overrides_ts ON overrides (ts);

-- The device identities each table reported, so a fault is recorded with the serial it had.
CREATE TABLE devices (
    table_id text   NOT NULL,
    device   text   NOT NULL,
    make     text,
    model    text,
    serial   text,
    firmware text,
    seq      bigint NOT NULL,
    PRIMARY KEY (table_id, device)
);

CREATE TABLE device_faults (
    table_id text        NOT NULL,
    seq      bigint      NOT NULL,
    ts       timestamptz NOT NULL,
    round    text,
    device   text,
    fault    text,
    kind     text        NOT NULL,  -- tilt|hold
    make     text,
    model    text,
    serial   text,
    PRIMARY KEY (table_id, seq)
);
CREATE INDEX device_faults_ts ON device_faults (ts);
CREATE INDEX device_faults_serial ON device_faults (serial, ts);

-- Chain custody alerts: a gap (seq..gap_to missing), a fork (a seq seen again with other
-- bytes), a broken link (prev is not the SHA-256 of the line before), a malformed message.
CREATE TABLE chain_alerts (
    id            bigserial PRIMARY KEY,
    table_id      text        NOT NULL,
    seq           bigint      NOT NULL,
    kind          text        NOT NULL CHECK (kind IN ('gap', 'fork', 'broken_link', 'malformed')),
    expected_hash text,
    actual_hash   text,
    gap_to        bigint,
    details       jsonb       NOT NULL DEFAULT '{}',
    evidence      bytea,     -- the other bytes of a fork, the message of a malformed line
    detected_at   timestamptz NOT NULL DEFAULT now(),
    resolved_at   timestamptz
);
CREATE INDEX chain_alerts_table ON chain_alerts (table_id, detected_at);
CREATE INDEX chain_alerts_open ON chain_alerts (table_id) WHERE resolved_at IS NULL;

-- Where the floor is in the stream: the stream sequence of the last committed message,
-- written in the same transaction as the rows, so a restart resumes exactly there.
CREATE TABLE stream_cursor (
    stream     text PRIMARY KEY,
    stream_seq bigint      NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
