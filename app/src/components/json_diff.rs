use leptos::prelude::*;
use serde_json::Value;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiffLine {
    Same(String),
    Removed(String),
    Added(String),
}

/// Line diff (longest common subsequence) of two texts.
pub fn diff_lines(before: &str, after: &str) -> Vec<DiffLine> {
    let a: Vec<&str> = before.lines().collect();
    let b: Vec<&str> = after.lines().collect();
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            out.push(DiffLine::Same(a[i].to_owned()));
            i += 1;
            j += 1;
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            // Removals first, so a changed line reads "- old" then "+ new".
            out.push(DiffLine::Removed(a[i].to_owned()));
            i += 1;
        } else {
            out.push(DiffLine::Added(b[j].to_owned()));
            j += 1;
        }
    }
    out
}

pub fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

/// The difference between two JSON texts, one line per row, marked - / +.
#[component]
pub fn JsonDiff(#[prop(into)] before: Signal<String>, #[prop(into)] after: Signal<String>) -> impl IntoView {
    let lines = move || {
        diff_lines(&before.get(), &after.get())
            .into_iter()
            .map(|line| match line {
                DiffLine::Same(t) => view! { <div class="diff-same">"  " {t}</div> },
                DiffLine::Removed(t) => view! { <div class="diff-removed">"- " {t}</div> },
                DiffLine::Added(t) => view! { <div class="diff-added">"+ " {t}</div> },
            })
            .collect_view()
    };
    view! { <pre class="json-diff" aria-label="Changes to the arguments">{lines}</pre> }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_line_shows_as_removed_then_added() {
        let d = diff_lines("{\n  \"a\": 1,\n  \"b\": 2\n}", "{\n  \"a\": 1,\n  \"b\": 3\n}");
        assert_eq!(
            d,
            vec![
                DiffLine::Same("{".into()),
                DiffLine::Same("  \"a\": 1,".into()),
                DiffLine::Removed("  \"b\": 2".into()),
                DiffLine::Added("  \"b\": 3".into()),
                DiffLine::Same("}".into()),
            ]
        );
    }

    #[test]
    fn identical_texts_have_no_changes() {
        assert!(diff_lines("x\ny", "x\ny").iter().all(|l| matches!(l, DiffLine::Same(_))));
    }
}
