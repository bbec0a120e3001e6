-- Conversational confirmation (seed 002's pattern 2): an approval may be answered by the user's
-- yes/no reply in the chat instead of the card's buttons. Same state machine, same decision event.
ALTER TABLE approvals ADD COLUMN confirm TEXT NOT NULL DEFAULT 'card' CHECK (confirm IN ('card', 'chat'));
