//! Which approvals the queue page shows, as the page, its loaders and the API client all name it.

use serde::{Deserialize, Serialize};

/// Which approvals the queue page shows.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct QueueQuery {
    /// `pending` or `decided`.
    pub status: String,
    /// One of the API's `order` names (`newest` when none).
    pub order: Option<String>,
    pub tool: Option<String>,
    pub user: Option<String>,
    pub risk: Option<String>,
    pub reversibility: Option<String>,
}

impl QueueQuery {
    /// The same filter as `/api/approvals` query parameters.
    pub fn to_query_string(&self) -> String {
        let mut q = format!("status={}&limit=200", self.status);
        let params = [
            ("order", &self.order),
            ("tool", &self.tool),
            ("user", &self.user),
            ("risk", &self.risk),
            ("reversibility", &self.reversibility),
        ];
        for (key, value) in params {
            if let Some(v) = value.as_deref().filter(|v| !v.is_empty()) {
                q.push_str(&format!("&{key}={}", encode(v)));
            }
        }
        q
    }
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect()
}
