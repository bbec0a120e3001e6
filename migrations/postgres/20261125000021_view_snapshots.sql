-- A conversation's folded view as of `last_seq` (JSON of app::domain::ConversationView), so a
-- reload folds only the events after it (engine/src/store/snapshots.rs). A cache, never the
-- truth: a snapshot of another `fold_version` is ignored and rebuilt from the events.
-- Twin of migrations/sqlite/20261125000021_view_snapshots.sql.
CREATE TABLE view_snapshots (
    conversation_id TEXT PRIMARY KEY NOT NULL REFERENCES conversations(id),
    fold_version    BIGINT NOT NULL,
    last_seq        BIGINT NOT NULL,
    view            TEXT NOT NULL,
    updated_at      BIGINT NOT NULL
);
