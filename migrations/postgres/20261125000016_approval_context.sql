-- What a decider reads besides the call: the user's request that led to it, the agent's stated
-- reasoning, and the steps of the turn already done (JSON, app::domain::wire::ApprovalContext).
-- Twin of migrations/sqlite/20261125000016_approval_context.sql.
ALTER TABLE approvals ADD COLUMN context TEXT;
-- Why the call is risky: factors, consequences, reversibility (JSON, app::domain::wire::RiskAssessment).
ALTER TABLE approvals ADD COLUMN assessment TEXT;
