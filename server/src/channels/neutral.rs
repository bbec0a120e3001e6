//! Requester text made inert wherever a decider reads it. Conversation titles, call summaries and
//! arguments come from the requester or the model: they may carry terminal escapes, line breaks
//! that fake a line of the message around them, bidi overrides that reorder what is shown, or
//! Slack markup. One pure function per target: the console, a line of plain text, Slack mrkdwn.

use std::fmt::Write as _;

/// Characters that act on the text around them instead of showing: controls (C0, DEL, C1), the
/// bidi embeddings, overrides and isolates, and Unicode's line and paragraph separators.
fn acts(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}')
}

/// Whitespace a reader takes as a line break or a column jump: folded to a space in a line.
fn folds(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\t' | '\u{b}' | '\u{c}' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// An acting character as a visible escape: `\e` for ESC, `\n` `\r` `\t`, else `\u{…}`.
fn show(c: char, out: &mut String) {
    match c {
        '\u{1b}' => out.push_str("\\e"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c => {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
    }
}

/// For a terminal: every acting character shown as an escape, so nothing reaches the terminal
/// that it would interpret, and the text stays on its line.
pub fn console(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if acts(c) { show(c, &mut out) } else { out.push(c) }
    }
    out
}

/// For one line of plain text (an email's text part, a subject, a protocol's message): line
/// breaks and tabs fold to one space, so the text cannot start a line of its own; other acting
/// characters are shown as escapes.
pub fn line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut folded = false;
    for c in text.chars() {
        if folds(c) {
            if !folded {
                out.push(' ');
            }
            folded = true;
            continue;
        }
        folded = false;
        if acts(c) { show(c, &mut out) } else { out.push(c) }
    }
    out
}

/// For Slack mrkdwn (also inside a code block): [`line`], then `&`, `<` and `>` escaped as Slack
/// asks, so the text can make no link, mention or channel ping, and no ``` to close a code block.
pub fn slack(text: &str) -> String {
    line(text).replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace("```", "'''")
}

/// Text of several lines whose breaks are ours (pretty-printed JSON): each line made inert by
/// `each`, the breaks kept.
pub fn lines(text: &str, each: fn(&str) -> String) -> String {
    text.lines().map(each).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLEAR_SCREEN: &str = "\x1b[2J\x1b[HApprove refund $1";
    const FAKE_LINE: &str = "Title\nApprove: http://evil";
    const SLACK_MARKUP: &str = "<!channel> <@U123> <http://evil|click>";
    const BIDI: &str = "refund \u{202e}1$ \u{2066}x\u{2069}";

    #[test]
    fn the_console_shows_escapes_and_controls_instead_of_obeying_them() {
        assert_eq!(console(CLEAR_SCREEN), "\\e[2J\\e[HApprove refund $1");
        assert_eq!(console(FAKE_LINE), "Title\\nApprove: http://evil");
        assert_eq!(console(BIDI), "refund \\u{202e}1$ \\u{2066}x\\u{2069}");
        // C1 (a one-byte CSI), DEL, BEL, backspace and a carriage return.
        assert_eq!(console("a\u{9b}2Jb\u{7f}\u{7}\u{8}\r"), "a\\u{9b}2Jb\\u{7f}\\u{7}\\u{8}\\r");
        assert_eq!(console("Refund $249.00 — “order” 1001 ü"), "Refund $249.00 — “order” 1001 ü", "ordinary text is unchanged");
        for hostile in [CLEAR_SCREEN, FAKE_LINE, BIDI, "\u{2028}\u{85}\u{0}"] {
            assert!(!console(hostile).chars().any(acts), "{hostile:?}");
        }
    }

    #[test]
    fn a_line_cannot_start_another_line() {
        assert_eq!(line(FAKE_LINE), "Title Approve: http://evil");
        assert_eq!(line("a\r\n\r\nb\tc\u{2028}d\u{85}e"), "a b c d e", "a run of breaks is one space");
        assert_eq!(line(CLEAR_SCREEN), "\\e[2J\\e[HApprove refund $1");
        assert_eq!(line(BIDI), "refund \\u{202e}1$ \\u{2066}x\\u{2069}");
        assert_eq!(line("Refund $249.00 on order 1001"), "Refund $249.00 on order 1001");
        assert_eq!(lines("{\n  \"note\": \"\u{202e}x\"\n}", line), "{\n  \"note\": \"\\u{202e}x\"\n}", "the JSON's own breaks stay");
    }

    #[test]
    fn slack_text_makes_no_mention_link_or_code_fence() {
        assert_eq!(slack(SLACK_MARKUP), "&lt;!channel&gt; &lt;@U123&gt; &lt;http://evil|click&gt;");
        assert_eq!(slack("a & b ```x```"), "a &amp; b '''x'''");
        assert_eq!(slack("Title\n*Approved* by root"), "Title *Approved* by root");
        assert_eq!(slack(CLEAR_SCREEN), "\\e[2J\\e[HApprove refund $1");
        assert_eq!(slack(BIDI), "refund \\u{202e}1$ \\u{2066}x\\u{2069}");
    }
}
