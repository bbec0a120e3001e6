//! The audit trail as admins read it: pages, the JSON Lines export, the chain's verification.

use super::Reads;
use crate::store::{
    audit::{self, AuditRow},
    audit_anchors::AuditKey,
    audit_verify,
};

pub use crate::store::audit_verify::{ExternalAnchor, Verification};

impl Reads {
    /// Entries after `after_id`, oldest first, optionally of one kind or actor: at most `limit`.
    pub async fn audit_page(&self, after_id: i64, kind: Option<&str>, actor: Option<&str>, limit: i64) -> anyhow::Result<Vec<AuditRow>> {
        audit::page(&self.store, after_id, kind, actor, limit).await
    }

    /// The newest `limit` entries, newest first, optionally of one kind or actor.
    pub async fn audit_newest(&self, kind: Option<&str>, actor: Option<&str>, limit: i64) -> anyhow::Result<Vec<AuditRow>> {
        audit::newest(&self.store, kind, actor, limit).await
    }

    /// The whole trail as JSON Lines, oldest first.
    pub async fn audit_export(&self) -> anyhow::Result<String> {
        audit::export_lines(&self.store).await
    }

    /// Whether the hash chain and its checkpoints check out (signatures with `key`, and `external`
    /// when given).
    pub async fn audit_verify(&self, key: Option<&AuditKey>, external: Option<&ExternalAnchor>) -> anyhow::Result<Verification> {
        audit_verify::verify(&self.store, key, external).await
    }
}
