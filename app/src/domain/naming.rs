//! How a chat is named: "New chat" until its first message names it. The server stores that title
//! when it stores the message; the chat page shows it at once, before the stored title arrives.

pub const DEFAULT_TITLE: &str = "New chat";

/// Characters of the first message a title keeps (then `…`).
const TITLE_CHARS: usize = 60;

/// The title a first message gives a chat.
pub fn title_from(first_message: &str) -> String {
    let mut title: String = first_message.chars().take(TITLE_CHARS).collect();
    if first_message.chars().count() > TITLE_CHARS {
        title.push('…');
    }
    title
}

/// What a chat is called on its page: its stored title, or while that is still the default, the
/// title its first message gives it.
pub fn shown_title(stored: &str, first_message: Option<&str>) -> String {
    match first_message {
        Some(text) if stored == DEFAULT_TITLE => title_from(text),
        _ => stored.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_message_names_a_new_chat_and_nothing_renames_a_named_one() {
        assert_eq!(title_from("refund order 1001"), "refund order 1001");
        let long = "é".repeat(61);
        assert_eq!(title_from(&long), format!("{}…", "é".repeat(60)));
        assert_eq!(title_from(&"x".repeat(60)), "x".repeat(60));
        assert_eq!(shown_title(DEFAULT_TITLE, Some("hello")), "hello");
        assert_eq!(shown_title(DEFAULT_TITLE, None), DEFAULT_TITLE);
        assert_eq!(shown_title("Refunds", Some("hello")), "Refunds");
    }
}
