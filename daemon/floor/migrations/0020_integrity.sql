-- Integrity analytics on the floor (issue 22, docs/integrity.md "The floor"): each table's
-- sufficient statistics, kept so that a pass reads only the lines since the last one, and the
-- four integrity alerts in the alert stream (chain_alerts, acknowledged as chain alerts are).

-- Where each table's pass stands: the last seq it read and the reading's state (the serial of
-- each device, the dealer at the shoe, the deck being dealt and the deck before it).
CREATE TABLE integrity_cursor (
    table_id   text        PRIMARY KEY,
    last_seq   bigint      NOT NULL DEFAULT 0,
    lines      bigint      NOT NULL DEFAULT 0,  -- audited lines read, all passes
    state      jsonb       NOT NULL DEFAULT '{}',
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- Per table, kind (dice | shuffle) and device serial: the running sums the audit reads
-- (daemon/analytics dice.DiceStats: face counts per position, the totals' sums for runs and
-- serial correlation, repeats, the 30 CUSUM states; shuffle.ShuffleStats: the rising-sequence
-- histogram, the guessing score, the 52 x 52 card x position table).
CREATE TABLE integrity_devices (
    table_id   text        NOT NULL,
    kind       text        NOT NULL CHECK (kind IN ('dice', 'shuffle')),
    serial     text        NOT NULL,
    samples    bigint      NOT NULL,  -- throws, decks audited
    skipped    bigint      NOT NULL DEFAULT 0,  -- decks not audited (not whole)
    stats      jsonb       NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, kind, serial)
);

-- The shoe reader's counts per table, serial and dealer (added to each pass).
CREATE TABLE integrity_reader (
    table_id text   NOT NULL,
    serial   text   NOT NULL,
    dealer   text   NOT NULL,
    reads    bigint NOT NULL DEFAULT 0,
    misreads bigint NOT NULL DEFAULT 0,
    entered  bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (table_id, serial, dealer)
);

-- The hold's sums per table and group (`grouping`: table | shift | dealer; `key`: the table,
-- "2027-01-15 night", the dealer) and rule set, summed in SQL from `settlements` each pass.
CREATE TABLE integrity_hold (
    table_id   text    NOT NULL,
    grouping   text    NOT NULL CHECK (grouping IN ('table', 'shift', 'dealer')),
    key        text    NOT NULL,
    ruleset    text    NOT NULL,
    rounds     bigint  NOT NULL DEFAULT 0,
    drop       numeric NOT NULL DEFAULT 0,
    win        numeric NOT NULL DEFAULT 0,
    commission numeric NOT NULL DEFAULT 0,
    squares    numeric NOT NULL DEFAULT 0,  -- sum over rounds of each seat's total squared
    cross_sum  numeric NOT NULL DEFAULT 0,  -- sum over rounds of (round total)^2 - squares
    PRIMARY KEY (table_id, grouping, key, ruleset)
);

ALTER TABLE chain_alerts DROP CONSTRAINT chain_alerts_kind_check;
ALTER TABLE chain_alerts ADD CONSTRAINT chain_alerts_kind_check
    CHECK (kind IN ('gap', 'fork', 'broken_link', 'malformed', 'unknown_table', 'forged',
                    'replay', 'dice_bias', 'shuffle_bias', 'reader_misreads', 'hold_outlier'));
-- One open integrity alert per table, kind and subject (a serial, or a hold group): a later
-- pass that still finds it updates that alert, never opens another.
CREATE UNIQUE INDEX chain_alerts_integrity_open ON chain_alerts (table_id, kind, (details->>'subject'))
    WHERE resolved_at IS NULL
      AND kind IN ('dice_bias', 'shuffle_bias', 'reader_misreads', 'hold_outlier');
