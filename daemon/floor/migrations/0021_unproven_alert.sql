-- Lines waiting for a signed head beyond the floor's bounds (issue 21): an open `unproven` alert
-- a table, its counts in details, resolved once they are proven (daemon/floor/store.py).
ALTER TABLE chain_alerts DROP CONSTRAINT chain_alerts_kind_check;
ALTER TABLE chain_alerts ADD CONSTRAINT chain_alerts_kind_check
    CHECK (kind IN ('gap', 'fork', 'broken_link', 'malformed', 'unknown_table', 'forged',
                    'replay', 'dice_bias', 'shuffle_bias', 'reader_misreads', 'hold_outlier',
                    'unproven'));
