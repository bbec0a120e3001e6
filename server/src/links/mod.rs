//! Signed decision links: an approve and a reject link for one person and one pending
//! approval, which work without logging in (for email and chat notifications). Following one
//! shows a confirmation page (a GET never decides); its button POSTs, and the decision is the
//! same one the API makes, audited as made through the link. The token: `token.rs`; the pages:
//! `page.rs`.

pub mod page;
pub mod token;

use domain::{ApprovalId, AuditKind};
use serde_json::json;

use crate::{
    EngineError,
    orchestrator::Actor,
    state::AppState,
    store::{
        WriteScope,
        time::{new_id, now_ms, rfc3339},
    },
};
use token::{Claims, LinkAction, LinkKey, args_hash};

/// Text as HTML text or attribute value (the link pages and the emails are written by hand).
pub fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

/// A request path as logs and spans may show it: a decision link's token is a credential, so
/// `/decide/<token>` is written `/decide/…`.
pub fn loggable_path(path: &str) -> &str {
    if path.starts_with("/decide/") { "/decide/…" } else { path }
}

/// The longest a link lives (never past its approval's deadline).
pub const MAX_TTL_SECS: i64 = 7 * 24 * 3600;

/// The link key: `COUNTERSIGN_LINK_KEY`, else one the server made once and keeps in the database
/// (so every replica signs and checks with the same one).
pub async fn key(config: &crate::config::Config, store: &crate::store::Store) -> anyhow::Result<LinkKey> {
    let secret = match &config.link_key {
        Some(key) => key.clone(),
        None => {
            let fresh = hex::encode(rand::random::<[u8; 32]>());
            crate::store::secrets::get_or_create(store, "link_key", fresh).await?
        }
    };
    Ok(match &config.link_key_previous {
        Some(previous) => LinkKey::new(&secret).with_previous(previous),
        None => LinkKey::new(&secret),
    })
}

/// May this person see the approval, as the API would let them: its owner, an admin, one its
/// gate's approvers or an escalation name, or someone standing in for one. A link is never made
/// for, nor used by, anyone else.
pub async fn sees_it(state: &AppState, approval: &crate::store::approvals::ApprovalRow, person: &Actor) -> anyhow::Result<bool> {
    if person.role == Some(domain::Role::Admin)
        || approval.owner.as_deref().is_some_and(|o| o.eq_ignore_ascii_case(&person.name))
        || approval.decided_by_user(&person.name)
    {
        return Ok(true);
    }
    let principals = crate::store::delegations::delegators_of(&state.store, &person.name, now_ms()).await?;
    Ok(principals.iter().any(|p| approval.decided_by_user(p)))
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
/// decide it now), valid for `ttl_secs` or until its deadline, whichever comes first; audited
/// (`link.issued`) as done by `by`.
/// `base`: what the links start with (a URL for messages; empty for paths).
pub async fn issue(
    state: &AppState,
    approval_id: &ApprovalId,
    decider: &Actor,
    ttl_secs: i64,
    by: &str,
    base: &str,
) -> Result<IssuedLinks, EngineError> {
    let (approval, as_decider) = state.decisions.may_decide_now(approval_id, decider).await?;
    // An approve link the person could not use (four-eyes) is not made: the refusal is said now.
    crate::orchestrator::four_eyes(&as_decider, &approval)?;
    if !sees_it(state, &approval, decider).await? {
        return Err(EngineError::NotAllowed(format!("{} does not see this approval (not theirs, not named to decide it)", decider.name)));
    }
    let expires_at = (now_ms() + ttl_secs.clamp(1, MAX_TTL_SECS) * 1000).min(approval.deadline);
    let link_id: String = new_id();
    let url = |action: LinkAction| {
        let claims = Claims {
            approval_id: approval.id.to_string(),
            decider: decider.name.clone(),
            action,
            args_hash: args_hash(&approval.args),
            expires_at,
            link_id: link_id.clone(),
            key_id: String::new(),
        };
        format!("{base}/decide/{}", state.links.sign(&claims))
    };
    let links = IssuedLinks {
        link_id: link_id.clone(),
        decider: decider.name.clone(),
        approve_url: url(LinkAction::Approve),
        reject_url: url(LinkAction::Reject),
        expires_at: rfc3339(expires_at),
    };
    let mut w = state.store.write(WriteScope::Approval(approval_id)).await?;
    let record = crate::store::decision_links::NewLink {
        id: &link_id,
        approval_id: approval.id.as_str(),
        decider: &decider.name,
        issued_by: by,
        expires_at,
    };
    crate::store::decision_links::insert(&mut w.tx, record).await?;
    w.audit(
        AuditKind::LinkIssued,
        by,
        json!({ "approval_id": approval.id, "link_id": link_id, "decider": decider.name, "expires_at": links.expires_at }),
    );
    w.commit().await?;
    Ok(links)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_links_token_never_reaches_a_log_line() {
        assert_eq!(super::loggable_path("/decide/7b22612233.abcdef"), "/decide/…");
        assert_eq!(super::loggable_path("/api/approvals"), "/api/approvals");
    }
}
