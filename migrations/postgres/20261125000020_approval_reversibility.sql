-- Whether the call can be undone (fully / partially / irreversible), from its risk assessment,
-- as a column so the queue can filter and sort by it (GET /api/approvals?reversibility=…&order=reversibility).
-- Older rows take it from their stored assessment (serialized by serde_json, compact).
-- Twin of migrations/sqlite/20261125000020_approval_reversibility.sql.
ALTER TABLE approvals ADD COLUMN reversibility TEXT;
UPDATE approvals SET reversibility = CASE
    WHEN assessment LIKE '%"reversibility":"irreversible"%' THEN 'irreversible'
    WHEN assessment LIKE '%"reversibility":"fully"%' THEN 'fully'
    ELSE 'partially' END
  WHERE assessment IS NOT NULL;
