-- A chain alert acknowledged from the floor page or API: who took it in hand, when, and their
-- note. An acknowledgement never resolves an alert (a fork stays a fork); it is set once.
ALTER TABLE chain_alerts
    ADD COLUMN acknowledged_at   timestamptz,
    ADD COLUMN acknowledged_by   text,
    ADD COLUMN acknowledged_role text,
    ADD COLUMN ack_note          text,
    ADD CONSTRAINT chain_alerts_ack_whole CHECK (
        (acknowledged_at IS NULL) = (acknowledged_by IS NULL)
        AND (acknowledged_at IS NULL) = (ack_note IS NULL)
    );

-- What people did on the floor (its only act is acknowledging an alert), refusals included:
-- nothing refused goes unrecorded.
CREATE TABLE floor_actions (
    id      bigserial PRIMARY KEY,
    at      timestamptz NOT NULL DEFAULT now(),
    actor   text        NOT NULL,
    role    text        NOT NULL,
    action  text        NOT NULL,
    target  text,
    outcome text        NOT NULL,  -- done | refused: <why>
    note    text
);
CREATE INDEX floor_actions_at ON floor_actions (at);
