-- One statement per appended event (issue 12, fewer round trips inside a write): the event takes
-- its conversation's next sequence number in its own INSERT (store/events.rs), and this trigger
-- moves the conversation's counter along in the same statement. SQLite's one writer orders it.
-- PostgreSQL does the same in one statement without a trigger (an UPDATE … RETURNING in a CTE,
-- which also takes the conversation's row lock): its twin migration changes nothing.
CREATE TRIGGER events_take_seq AFTER INSERT ON events
BEGIN
    UPDATE conversations SET last_seq = NEW.seq WHERE id = NEW.conversation_id;
END;
