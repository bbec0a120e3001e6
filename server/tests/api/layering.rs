//! The core knows nothing of HTTP: the orchestrator, the store, tools, models, policy, metrics,
//! the bus and webhooks never import axum or the web layer (`api`, `auth`, `state`), so they can
//! be driven from the CLI, a test or another protocol (docs/architecture.md, "Module map").

use std::path::{Path, PathBuf};

const CORE: [&str; 11] =
    ["orchestrator", "store", "tools", "model", "policy.rs", "metrics.rs", "bus.rs", "webhooks.rs", "agents.rs", "cli.rs", "config.rs"];
const WEB: [&str; 4] = ["axum", "crate::api", "crate::auth", "crate::state"];

fn rust_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        for entry in std::fs::read_dir(path).unwrap() {
            rust_files(&entry.unwrap().path(), out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_owned());
    }
}

#[test]
fn the_core_imports_nothing_of_the_web_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    for part in CORE {
        rust_files(&src.join(part), &mut files);
    }
    assert!(files.len() > 20, "the core's files were found: {files:?}");
    let mut offenders = Vec::new();
    for file in &files {
        for (n, line) in std::fs::read_to_string(file).unwrap().lines().enumerate() {
            let code = line.trim_start();
            if !code.starts_with("//") && WEB.iter().any(|web| code.contains(web)) {
                offenders.push(format!("{}:{}: {code}", file.display(), n + 1));
            }
        }
    }
    assert!(offenders.is_empty(), "the core reaches into the web layer:\n{}", offenders.join("\n"));
}
