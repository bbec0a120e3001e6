-- The MCP approval gateway (issue 18): a call an outside client proposes is a one-step task of a
-- conversation of the client's user; `seen_at` / `gone_at` say whether the client still waits for
-- it (an approved call whose client is gone is not run, docs/mcp-gateway.md). Each client (an API
-- token) has one conversation per agent, whose id is derived from them (server/src/protocols/mcp.rs).
-- Twin of migrations/postgres/20261126000032_client_calls.sql.
CREATE TABLE client_calls (
    task_id         TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL,
    client          TEXT NOT NULL,
    tool            TEXT NOT NULL,
    args            TEXT NOT NULL,
    seen_at         INTEGER NOT NULL,
    gone_at         INTEGER
);
-- The name a client gave in MCP's `initialize` (clientInfo.name), kept with its credential: the
-- gateway is stateless, so later requests say only which token they carry.
CREATE TABLE client_names (
    user_id         TEXT NOT NULL,
    client_key      TEXT NOT NULL,
    name            TEXT NOT NULL,
    PRIMARY KEY (user_id, client_key)
);
