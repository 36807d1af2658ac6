-- A line whose envelope is not the one its table's shipper gives it (its Nats-Msg-Id is not
-- "<table>:<seq>", or "<table>:<seq>:conflict:<sha16>" on the conflict subject; its subject
-- does not name its event): someone republished it. Quarantined and alerted as `replay`.
ALTER TABLE chain_alerts DROP CONSTRAINT chain_alerts_kind_check;
ALTER TABLE chain_alerts ADD CONSTRAINT chain_alerts_kind_check
    CHECK (kind IN ('gap', 'fork', 'broken_link', 'malformed', 'unknown_table', 'forged',
                    'replay'));
