-- The audited fields of each line, written at ingest (daemon/floor/facts.py): the floor's
-- integrity pass reads these narrow rows, not the lines (docs/integrity.md "The floor").

-- One row per audited line, or per run of card.dealt lines (seq .. last_seq, no stored line
-- of the table missing between them). kind: device (device, serial in value) | shoe (the dealer
-- in value) | shuffle (value random | other) | void | misread | dice (faces, a byte each) |
-- cards (ids 0-51, 255 not a card; indexes 1-52, 0 outside; entered: how many by hand) |
-- started (table.started: the table's rule set in value).
CREATE TABLE integrity_facts (
    table_id text     NOT NULL,
    seq      bigint   NOT NULL,
    last_seq bigint   NOT NULL,
    kind     text     NOT NULL
        CHECK (kind IN ('device', 'shoe', 'shuffle', 'void', 'misread', 'dice', 'cards',
                        'started')),
    device   text,
    value    text,
    cards    bytea,
    idx      bytea,
    entered  integer  NOT NULL DEFAULT 0,
    dice     bytea,
    PRIMARY KEY (table_id, seq)
);
-- A pass starts a table's window at the deck it left open: the last shuffles before it.
CREATE INDEX integrity_facts_shuffles ON integrity_facts (table_id, seq) WHERE kind = 'shuffle';
-- A round whose bets name no rule set (Pai Gow's) is the table's last table.started's.
CREATE INDEX integrity_facts_started ON integrity_facts (table_id, seq) WHERE kind = 'started';

-- One row per round.settled: what the hold sums (daemon.analytics.hold.HoldSums.add); ruleset
-- '' when its bets name none (the table's, from its `started` fact, at the pass).
CREATE TABLE integrity_rounds (
    table_id   text        NOT NULL,
    seq        bigint      NOT NULL,
    ts         timestamptz NOT NULL,
    dealer     text        NOT NULL,
    ruleset    text        NOT NULL,
    drop       numeric     NOT NULL,
    win        numeric     NOT NULL,
    commission numeric     NOT NULL,
    squares    numeric     NOT NULL,
    cross_sum  numeric     NOT NULL,
    PRIMARY KEY (table_id, seq)
);

-- The facts of the lines stored before this migration, from the lines themselves (cards one
-- row each), and the integrity passes start again from each table's first line with the same
-- card ids as the facts' (the alerts stay: the next pass updates or resolves them).
INSERT INTO integrity_facts (table_id, seq, last_seq, kind, device, value, cards, idx, entered,
                             dice)
SELECT table_id, seq, seq, kind, device, value, cards, idx, entered, dice FROM (
    SELECT l.table_id, l.seq,
           CASE l.event WHEN 'device.identified' THEN 'device' WHEN 'shoe.loaded' THEN 'shoe'
                WHEN 'table.started' THEN 'started'
                WHEN 'deck.machine_shuffled' THEN 'shuffle' WHEN 'deal.voided' THEN 'void'
                WHEN 'table.tilted' THEN
                    CASE WHEN j.p->>'device' = 'shoe_reader' AND j.p->>'fault' LIKE 'misread%'
                         THEN 'misread' END
                WHEN 'dice.landed' THEN
                    CASE WHEN jsonb_typeof(j.p->'dice') = 'array' AND NOT EXISTS (
                             SELECT 1 FROM jsonb_array_elements(j.p->'dice') e
                             WHERE e::text !~ '^[0-9]{1,3}$' OR e::text::int > 255)
                         THEN 'dice' END
                ELSE 'cards' END AS kind,
           CASE WHEN l.event = 'device.identified' THEN j.p->>'device' END AS device,
           CASE l.event
                WHEN 'device.identified' THEN coalesce(nullif(j.p->>'serial', ''), 'unknown')
                WHEN 'shoe.loaded' THEN l.actor
                WHEN 'table.started' THEN coalesce(j.p->>'ruleset', '')
                WHEN 'deck.machine_shuffled' THEN
                    CASE WHEN j.p->'count' = '52' AND j.p->>'mode' = 'random'
                         THEN 'random' ELSE 'other' END
           END AS value,
           CASE WHEN l.event = 'card.dealt' THEN set_byte('\x00'::bytea, 0, coalesce(
               CASE WHEN length(j.p->>'card') = 2
                         AND position(substr(j.p->>'card', 1, 1) IN '23456789TJQKA') > 0
                         AND position(substr(j.p->>'card', 2, 1) IN 'cdhs') > 0
                    THEN (position(substr(j.p->>'card', 1, 1) IN '23456789TJQKA') - 1) * 4
                         + position(substr(j.p->>'card', 2, 1) IN 'cdhs') - 1 END, 255))
           END AS cards,
           CASE WHEN l.event = 'card.dealt' THEN set_byte('\x00'::bytea, 0,
               CASE WHEN jsonb_typeof(j.p->'index') = 'number'
                         AND (j.p->>'index')::numeric BETWEEN 1 AND 52
                         AND (j.p->>'index')::numeric = round((j.p->>'index')::numeric)
                    THEN (j.p->>'index')::int ELSE 0 END)
           END AS idx,
           CASE WHEN l.event = 'card.dealt' AND j.p ? 'entered' THEN 1 ELSE 0 END AS entered,
           CASE WHEN l.event = 'dice.landed' AND jsonb_typeof(j.p->'dice') = 'array' THEN
               (SELECT string_agg(set_byte('\x00'::bytea, 0, f::int), ''::bytea ORDER BY n)
                FROM jsonb_array_elements_text(j.p->'dice') WITH ORDINALITY AS d(f, n)
                WHERE f ~ '^[0-9]{1,3}$' AND f::int < 256)
           END AS dice
    FROM journal_lines l
    CROSS JOIN LATERAL (SELECT convert_from(l.line, 'UTF8')::jsonb->'payload' AS p) j
    WHERE l.event IN ('device.identified', 'shoe.loaded', 'deck.machine_shuffled',
                      'deal.voided', 'table.tilted', 'dice.landed', 'card.dealt',
                      'table.started')
) f
WHERE kind IS NOT NULL;

INSERT INTO integrity_rounds (table_id, seq, ts, dealer, ruleset, drop, win, commission,
                              squares, cross_sum)
SELECT b.table_id, b.seq, b.ts, l.actor, b.ruleset, b.drop, b.win, b.commission, b.squares,
       b.drop * b.drop - b.squares
FROM (
    SELECT table_id, seq, min(ts) AS ts,
           coalesce((array_agg(ruleset ORDER BY item DESC)
                     FILTER (WHERE ruleset IS NOT NULL))[1], '') AS ruleset,
           sum(amount) AS drop, -sum(net) AS win, sum(commission) AS commission,
           (SELECT sum(a * a) FROM unnest(array_agg(seat_amount)) AS a) AS squares
    FROM (
        SELECT s.table_id, s.seq, s.item, s.ts, coalesce(s.amount, 0) AS amount,
               coalesce(s.net, 0) AS net, s.detail->'rules'->>'ruleset' AS ruleset,
               coalesce(coalesce(nullif(s.detail->'rules'->>'commission', '')::numeric, 0)
                        * s.amount / nullif(coalesce(nullif(s.detail->'rules'->>'bet', '')
                        ::numeric, 0), 0), 0) AS commission,
               CASE WHEN s.item = max(s.item) OVER (PARTITION BY s.table_id, s.seq,
                                                   coalesce(s.seat, 0))
                    THEN sum(coalesce(s.amount, 0)) OVER (PARTITION BY s.table_id, s.seq,
                                                          coalesce(s.seat, 0)) END
                   AS seat_amount
        FROM settlements s
    ) i
    GROUP BY table_id, seq
) b
JOIN journal_lines l ON l.table_id = b.table_id AND l.seq = b.seq AND l.ts = b.ts;

-- Pai Gow's rounds (a settlement object: the doors' bets; the house wins the commission and its
-- own co-bank share's net), which `settlements` does not hold.
INSERT INTO integrity_rounds (table_id, seq, ts, dealer, ruleset, drop, win, commission,
                              squares, cross_sum)
SELECT l.table_id, l.seq, l.ts, l.actor, '', d.drop, c.commission + h.house, c.commission,
       d.squares, d.drop * d.drop - d.squares
FROM journal_lines l
CROSS JOIN LATERAL (SELECT convert_from(l.line, 'UTF8')::jsonb->'payload'->'settlement' AS s) j
CROSS JOIN LATERAL (
    SELECT coalesce(sum(b), 0) AS drop, coalesce(sum(b * b), 0) AS squares
    FROM (SELECT sum(coalesce((e->>'bet')::numeric, 0)) AS b
          FROM jsonb_array_elements(coalesce(j.s->'doors', '[]')) e
          GROUP BY coalesce((e->>'seat')::int, 0)) seat
) d
CROSS JOIN LATERAL (SELECT coalesce((j.s->>'commission')::numeric, 0) AS commission) c
CROSS JOIN LATERAL (
    SELECT coalesce(sum((e->>'net')::numeric), 0) AS house
    FROM jsonb_array_elements(coalesce(j.s->'co_bankers', '[]')) e
    WHERE (e->>'house')::boolean
) h
WHERE l.event = 'round.settled' AND jsonb_typeof(j.s) = 'object';

DELETE FROM integrity_cursor;
DELETE FROM integrity_devices;
DELETE FROM integrity_reader;
DELETE FROM integrity_hold;
