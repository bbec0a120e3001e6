//! How a chat is named: "New chat" until its first message names it. The server stores that title
//! when it stores the message; the chat page shows it at once, before the stored title arrives.

pub const DEFAULT_TITLE: &str = "New chat";

/// The built-in tool with which an agent asks the user a question (its card is a question with an
/// answer box, not Approve / Reject).
pub const ASK_USER: &str = "ask_user";

/// The built-in tool that stands for an agent's final answer while a `final_response` gate holds
/// it (its card shows the draft; approving it sends the answer, edited or not).
pub const FINAL_ANSWER: &str = "final_answer";

/// The built-in tool with which a planning agent proposes the calls it means to make, for one
/// approval of the whole plan (a `plan` gate).
pub const PROPOSE_PLAN: &str = "propose_plan";

/// Whether "always allow" may cover the tool's calls: not a question, an answer or a plan, which
/// are decided one by one.
pub fn grantable(tool: &str) -> bool {
    ![ASK_USER, FINAL_ANSWER, PROPOSE_PLAN].contains(&tool)
}

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

/// A tool's name for people: `process_refund` → "Process refund", `readFile` → "Read file",
/// `github.create-issue` → "Github create issue". The technical name stays on the card, small.
pub fn tool_title(name: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if c == '_' || c == '-' || c == '.' || c == ' ' || c == '/' {
            words.extend((!word.is_empty()).then(|| std::mem::take(&mut word)));
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower {
            words.push(std::mem::take(&mut word));
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        word.extend(c.to_lowercase());
    }
    words.extend((!word.is_empty()).then_some(word));
    let mut title = words.join(" ");
    if let Some(first) = title.chars().next() {
        title.replace_range(..first.len_utf8(), &first.to_uppercase().to_string());
    }
    if title.is_empty() { name.to_owned() } else { title }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_get_names_people_read() {
        assert_eq!(tool_title("process_refund"), "Process refund");
        assert_eq!(tool_title("readFile"), "Read file");
        assert_eq!(tool_title("github.create-issue"), "Github create issue");
        assert_eq!(tool_title("get_order"), "Get order");
        assert_eq!(tool_title("HTTPGet"), "Httpget");
        assert_eq!(tool_title("__"), "__");
        assert_eq!(tool_title("écrire_fichier"), "Écrire fichier");
    }

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
