//! The dependency arrows go one way: web (the `server` crate: `api`, `auth`, pages, `state`) →
//! {UI (`app`), engine (use cases, policy, tools, models)} → store (its queries and the bus) →
//! clock → `domain`. Crates make most of it a compile error, checked below on `cargo tree`: the
//! engine has no axum, Leptos, app or server among its dependencies, and the store and the clock
//! have not even the engine. Inside the crates, these rules keep the bus plain memory and the
//! configuration apart from the people it names; the server names no store, only the engine's use
//! cases (opened through engine/src/database.rs); and a handler file uses the shared helpers of
//! `api` (`access`, `extract`, `resume`, `event_stream`), never another handler's
//! (docs/architecture.md, "Crates" and "Modules").

use std::path::{Path, PathBuf};

/// Where a rule applies (files or folders, from the workspace's root) and what it may not name.
struct Rule {
    name: &'static str,
    files: &'static [&'static str],
    forbidden: &'static [&'static str],
}

const RULES: &[Rule] = &[
    Rule {
        name: "the engine names nothing of the web layer, not even in a path",
        files: &[
            "engine/src/orchestrator",
            "engine/src/reads",
            "engine/src/tools",
            "engine/src/model",
            "engine/src/policy.rs",
            "engine/src/metrics.rs",
            "engine/src/webhooks.rs",
            "engine/src/agents.rs",
            "engine/src/agents",
            "engine/src/config.rs",
            "engine/src/limits.rs",
            "engine/src/database.rs",
        ],
        forbidden: &["axum", "tower_sessions", "server::", "leptos"],
    },
    Rule {
        name: "the configuration names nothing of the people it configures",
        files: &["engine/src/agents.rs", "engine/src/agents"],
        forbidden: &["crate::people"],
    },
    Rule {
        name: "the form of approvers' names stands below the rest of the engine",
        files: &["engine/src/approver_names.rs"],
        forbidden: &["crate::"],
    },
    Rule {
        name: "the bus is plain memory: the store publishes to it, it knows nothing of the store",
        files: &["store/src/bus.rs"],
        forbidden: &["crate::", "super::", "sqlx"],
    },
];

fn rust_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        for entry in std::fs::read_dir(path).unwrap() {
            rust_files(&entry.unwrap().path(), out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_owned());
    }
}

/// Lines of `rule`'s files naming something it forbids (code only: comments may name anything).
fn offenders(src: &Path, rule: &Rule) -> Vec<String> {
    let mut files = Vec::new();
    for part in rule.files {
        let path = src.join(part);
        assert!(path.exists(), "{}: {} does not exist (renamed? update the rule)", rule.name, path.display());
        rust_files(&path, &mut files);
    }
    let mut found = Vec::new();
    for file in &files {
        for (n, line) in std::fs::read_to_string(file).unwrap().lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            if let Some(hit) = rule.forbidden.iter().find(|f| code.contains(*f)) {
                found.push(format!("{}:{}: {code}  (names {hit})", file.display(), n + 1));
            }
        }
    }
    found
}

/// The API modules every handler may use; any other `super::x` in a handler is another handler.
const API_HELPERS: &[&str] = &["extract", "access", "resume", "event_stream", "*"];

/// The sibling modules `file` imports through `use super::…` (one statement may span lines).
fn siblings_used(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut used = Vec::new();
    for statement in text.split(';').map(str::trim).filter_map(|s| s.strip_prefix("use super::")) {
        // `{ApiError, access::{self, actor}}` → the first segment of each top-level item.
        let inner = statement.trim().trim_start_matches('{').trim_end_matches('}');
        let mut depth = 0;
        let mut item = String::new();
        for c in inner.chars().chain([',']) {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    let first = item.trim().split("::").next().unwrap_or("").to_owned();
                    if !first.is_empty() {
                        used.push(first);
                    }
                    item.clear();
                    continue;
                }
                _ => {}
            }
            item.push(c);
        }
    }
    used
}

#[test]
fn handlers_share_only_the_api_helpers() {
    let api = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/api");
    let mut broken = Vec::new();
    for entry in std::fs::read_dir(&api).unwrap() {
        let file = entry.unwrap().path();
        if file.extension().is_none_or(|e| e != "rs") || file.ends_with("mod.rs") {
            continue;
        }
        for sibling in siblings_used(&file) {
            if !API_HELPERS.contains(&sibling.as_str()) {
                broken.push(format!("{} uses super::{sibling}", file.display()));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "a handler reaches into another handler (move the helper to api/access.rs or the core):\n{}",
        broken.join("\n")
    );
}

/// The code (neither comments nor string literals) of `line`: a `"no-store"` header value or a
/// comment about the store names no store. A string is taken to end on its line.
fn code_of(line: &str) -> String {
    let mut code = String::new();
    let mut chars = line.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            match c {
                '\\' => {
                    chars.next();
                }
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                code.push_str("\"\"");
            }
            // A character literal such as '"' or '\'' is no string's start.
            '\'' => {
                let rest: String = chars.clone().take(3).collect();
                let skip = if rest.starts_with('\\') {
                    3
                } else if rest.chars().nth(1) == Some('\'') {
                    2
                } else {
                    0
                };
                for _ in 0..skip {
                    chars.next();
                }
                code.push_str("' '");
            }
            '/' if chars.peek() == Some(&'/') => break,
            _ => code.push(c),
        }
    }
    code
}

/// Whether `code` names `store` as a word of its own (`store::…`, `engine::store`, `.store`, a
/// variable `store`); `session_store` or `SqliteStore` are other words.
fn names_store(code: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    code.match_indices("store").any(|(at, _)| {
        let before = code[..at].chars().next_back();
        let after = code[at + "store".len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

/// Lines of the Rust files under `root` whose code names the store.
fn store_mentions(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(root, &mut files);
    let mut found = Vec::new();
    for file in &files {
        for (n, line) in std::fs::read_to_string(file).unwrap().lines().enumerate() {
            if names_store(&code_of(line)) {
                found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    found
}

#[test]
fn the_server_names_no_store() {
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = store_mentions(&server);
    assert!(
        found.is_empty(),
        "the server names the engine's store; it holds none and opens the engine through engine/src/database.rs, \
         whose use cases it calls (docs/architecture.md, \"Crates\"):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_dependency_arrows_go_one_way() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut broken = Vec::new();
    for rule in RULES {
        for line in offenders(&workspace, rule) {
            broken.push(format!("{}: {line}", rule.name));
        }
    }
    assert!(broken.is_empty(), "a dependency arrow points the wrong way:\n{}", broken.join("\n"));
}

/// The packages `package` builds on (normal dependencies, its default features), by name.
fn dependencies_of(package: &str) -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["tree", "--offline", "-e", "normal", "--prefix", "none", "--format", "{p}", "-p", package])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(out.status.success(), "cargo tree -p {package}: {}", String::from_utf8_lossy(&out.stderr));
    let mut names: Vec<String> =
        String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| l.split_whitespace().next()).map(str::to_owned).collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn the_engine_and_what_it_stands_on_build_on_no_web_framework() {
    let web = ["leptos", "leptos_axum", "tachys", "reactive_graph", "axum", "tower-sessions", "app", "server"];
    for (package, also_forbidden) in [
        ("engine", &[][..]),
        // The store knows nothing of what uses it, the clock nothing of the store.
        ("store", &["engine", "reqwest", "rmcp"][..]),
        ("clock", &["engine", "store", "sqlx", "tokio"][..]),
        ("domain", &["sqlx", "utoipa", "tokio"][..]),
    ] {
        let deps = dependencies_of(package);
        assert!(deps.iter().any(|d| d == "serde"), "cargo tree -p {package} lists its dependencies: {deps:?}");
        let wrong: Vec<&String> = deps.iter().filter(|d| web.contains(&d.as_str()) || also_forbidden.contains(&d.as_str())).collect();
        assert!(wrong.is_empty(), "{package} builds on {wrong:?} (docs/architecture.md, \"Crates\")");
    }
}

#[test]
fn a_wrong_arrow_is_found() {
    // The checker itself: a file that breaks a rule is reported.
    let dir = std::env::temp_dir().join(format!("layering-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("api")).unwrap();
    std::fs::write(dir.join("bus.rs"), "use crate::store::Store;\n// crate::store in a comment is fine\n").unwrap();
    std::fs::write(
        dir.join("api/tasks.rs"),
        "use super::{\n    ApiError,\n    access::{self, actor},\n    approvals::reason_of,\n};\nuse super::conversations;\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("server")).unwrap();
    std::fs::write(
        dir.join("server/state.rs"),
        "use engine::store::Store;\n\
         // the store, in a comment\n\
         let s = state.store.clone(); // store\n\
         headers.insert(CACHE_CONTROL, \"no-store\");\n\
         let sessions = session_store::Sessions::open(pool, SqliteStore::new(p), '\"', \"a \\\" store\");\n\
         let store = 1;\n",
    )
    .unwrap();
    let bus = Rule { name: "bus", files: &["bus.rs"], forbidden: &["crate::"] };
    assert_eq!(offenders(&dir, &bus).len(), 1);
    assert_eq!(siblings_used(&dir.join("api/tasks.rs")), ["ApiError", "access", "approvals", "conversations"]);
    let lines: Vec<String> = store_mentions(&dir.join("server")).iter().map(|l| l.split_once(": ").unwrap().1.to_owned()).collect();
    assert_eq!(lines, ["use engine::store::Store;", "let s = state.store.clone(); // store", "let store = 1;"]);
    std::fs::remove_dir_all(&dir).unwrap();
}
