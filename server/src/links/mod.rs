//! Signed decision links: an approve and a reject link for one person and one pending
//! approval, which work without logging in (for email and chat notifications). Following one
//! shows a confirmation page (a GET never decides); its button POSTs, and the decision is the
//! same one the API makes, audited as made through the link. The token: `token.rs`; the pages:
//! `page.rs`.

pub mod page;
pub mod token;

use domain::ApprovalId;
use engine::clock::rfc3339;

use crate::{
    EngineError,
    orchestrator::{Actor, DecisionLinks},
    state::AppState,
};
use token::{Claims, LinkAction, LinkKey, args_hash};

/// A request path as logs and spans may show it: a decision link's token is a credential, so
/// `/decide/<token>` is written `/decide/…`.
pub fn loggable_path(path: &str) -> &str {
    if path.starts_with("/decide/") { "/decide/…" } else { path }
}

/// The longest a link lives (never past its approval's deadline).
pub const MAX_TTL_SECS: i64 = 7 * 24 * 3600;

/// The link key: `COUNTERSIGN_LINK_KEY`, else one the server made once and the engine keeps in
/// the database (so every replica signs and checks with the same one).
pub async fn key(config: &crate::config::Config, links: &DecisionLinks) -> anyhow::Result<LinkKey> {
    let secret = match &config.link_key {
        Some(key) => key.clone(),
        None => links.signing_key(hex::encode(rand::random::<[u8; 32]>())).await?,
    };
    Ok(match &config.link_key_previous {
        Some(previous) => LinkKey::new(&secret).with_previous(previous),
        None => LinkKey::new(&secret),
    })
}

/// An approval's pair of links for one person.
#[derive(Clone, Debug, serde::Serialize, utoipa::ToSchema)]
pub struct IssuedLinks {
    /// Names the pair, to revoke it (`POST /api/links/{id}/revoke`).
    pub link_id: String,
    pub decider: String,
    pub approve_url: String,
    pub reject_url: String,
    /// RFC 3339.
    pub expires_at: String,
}

/// Makes the approve and reject links of a pending approval for `decider` (who must be able to
/// decide it now and see it), valid for `ttl_secs` or until its deadline, whichever comes first;
/// the engine records them, audited (`link.issued`) as done by `by`, and checks who may have them
/// inside that write (engine/src/orchestrator/decision_links.rs); they are signed here.
/// `base`: what the links start with (a URL for messages; empty for paths).
pub async fn issue(
    state: &AppState,
    approval_id: &ApprovalId,
    decider: &Actor,
    ttl_secs: i64,
    by: &str,
    base: &str,
) -> Result<IssuedLinks, EngineError> {
    let issued = state.decision_links.issue(approval_id, decider, ttl_secs.clamp(1, MAX_TTL_SECS), by).await?;
    let url = |action: LinkAction| {
        let claims = Claims {
            approval_id: issued.approval.id.to_string(),
            decider: decider.name.clone(),
            action,
            args_hash: args_hash(&issued.approval.args),
            expires_at: issued.expires_at,
            link_id: issued.link_id.clone(),
            key_id: String::new(),
        };
        format!("{base}/decide/{}", state.links.sign(&claims))
    };
    Ok(IssuedLinks {
        link_id: issued.link_id.clone(),
        decider: decider.name.clone(),
        approve_url: url(LinkAction::Approve),
        reject_url: url(LinkAction::Reject),
        expires_at: rfc3339(issued.expires_at),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_links_token_never_reaches_a_log_line() {
        assert_eq!(super::loggable_path("/decide/7b22612233.abcdef"), "/decide/…");
        assert_eq!(super::loggable_path("/api/approvals"), "/api/approvals");
    }
}
