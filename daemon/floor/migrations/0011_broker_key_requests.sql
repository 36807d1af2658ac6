-- Replacing a table's broker key takes two floor admins, like a re-enrolment (issue 21): the
-- first admin's `tabled floor broker-key` is a request here, a second, other admin's completes
-- it. A request (here or in enrol_requests) not completed within 24 hours is deleted by the next
-- admin command and recorded in floor_actions as expired (daemon/floor/admin.py).
CREATE TABLE broker_key_requests (
    table_id     text        NOT NULL REFERENCES enrolled_tables (table_id),
    nkey         text        NOT NULL CHECK (nkey ~ '^U[A-Z2-7]{55}$'),
    requested_by text        NOT NULL,
    requested_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, nkey)
);
CREATE INDEX enrol_requests_at ON enrol_requests (requested_at);
