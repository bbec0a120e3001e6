-- client_calls.request_key: the outside client's own name for the request that made the call
-- (an MCP gateway call: its credential and JSON-RPC request id), so that the client's
-- `notifications/cancelled`, which any replica may receive, finds the call it stops.
ALTER TABLE client_calls ADD COLUMN request_key TEXT;
CREATE INDEX client_calls_by_request ON client_calls (request_key);
