-- A task's events without reading the rest of its conversation: an MCP client's conversation
-- holds every call the client made, and each call reads its own task's events.
CREATE INDEX events_by_task ON events (conversation_id, task_id, seq);
