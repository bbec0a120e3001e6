//! What server-side rendering reads: the same engine reads (engine/src/reads) and visibility rules
//! as the API, behind the `PageData` trait the app crate defines.

use app::{
    data::{
        BoxFuture, ChatData, Loaded,
        ssr::{DataSource, PageData, Parts},
    },
    queue_query::QueueQuery,
};
use domain::{
    ApprovalState, ConversationId, Risk, UserId,
    wire::{Approval, Conversation, LivePolicy, Me, SignInOptions},
};
use engine::{
    clock::now_ms,
    reads::{Filter, QueueOrder, Reads, StateFilter},
};

use crate::{auth::MaybeUser, people::User};

/// The people the page's viewer decides in place of (delegations in force), for their cards'
/// buttons: read once per page (server/src/pages.rs), handed to the page data here.
#[derive(Clone, Debug, Default)]
pub struct StandsInFor(pub Vec<String>);

/// The chat's page size, the agent configuration's version, the sign-in options, the
/// configuration in force (the Policy page's, with the draft in shadow if any), when the server
/// started (the draft's hits are counted from then) and the engine's read side, which every page
/// reads through.
struct Pages(usize, String, SignInOptions, LivePolicy, i64, Reads);

fn unavailable(err: anyhow::Error) -> String {
    tracing::error!(error = ?err, "page data failed");
    "the server could not read its database".into()
}

fn viewer(parts: &Parts) -> Option<User> {
    parts.extensions.get::<MaybeUser>().and_then(|v| v.0.clone())
}

fn sees(user: &User, owner_id: Option<&UserId>) -> bool {
    user.is_admin() || owner_id == Some(&user.id)
}

impl PageData for Pages {
    fn sign_in_options(&self) -> SignInOptions {
        self.2.clone()
    }

    fn me(&self, parts: &Parts) -> Option<Me> {
        let stands_in_for = parts.extensions.get::<StandsInFor>().map(|s| s.0.clone()).unwrap_or_default();
        viewer(parts).as_ref().map(|user| Me { stands_in_for, ..Me::from(user) })
    }

    fn policy(&self, parts: &Parts) -> BoxFuture<Loaded<Option<LivePolicy>>> {
        let (reads, policy, started_ms) = (self.5.clone(), viewer(parts).filter(User::is_admin).map(|_| self.3.clone()), self.4);
        Box::pin(async move {
            let Some(policy) = policy else { return Ok(None) };
            // The draft in shadow's hits as they are now, as `GET /api/policy` counts them.
            reads.count_draft_hits(policy, started_ms).await.map(Some).map_err(unavailable)
        })
    }

    fn conversations(&self, parts: &Parts) -> BoxFuture<Loaded<Vec<Conversation>>> {
        let (reads, user) = (self.5.clone(), viewer(parts));
        Box::pin(async move {
            let user = user.ok_or("log in first")?;
            let owner = (!user.is_admin()).then_some(&user.id);
            reads.conversations(owner, 200).await.map_err(unavailable)
        })
    }

    fn chat(&self, parts: &Parts, id: ConversationId) -> BoxFuture<Loaded<Option<ChatData>>> {
        let (reads, user, page_items, policy_version) = (self.5.clone(), viewer(parts), self.0, self.1.clone());
        let stands_in_for = parts.extensions.get::<StandsInFor>().map(|s| s.0.clone()).unwrap_or_default();
        Box::pin(async move {
            let user = user.ok_or("log in first")?;
            let conversation = reads.conversation(&id).await.map_err(unavailable)?;
            let Some(conversation) = conversation.filter(|c| sees(&user, c.owner_id.as_ref())) else { return Ok(None) };
            let view = reads.view_page(&id, page_items).await.map_err(unavailable)?;
            let viewer_is_owner = conversation.owner_id.as_ref() == Some(&user.id);
            let viewer_name = user.username.clone();
            let viewer_is_admin = user.is_admin();
            Ok(Some(ChatData { conversation, view, viewer_is_admin, viewer_is_owner, viewer_name, stands_in_for, policy_version }))
        })
    }

    fn approvals(&self, parts: &Parts, query: QueueQuery) -> BoxFuture<Loaded<Vec<Approval>>> {
        let (reads, user) = (self.5.clone(), viewer(parts));
        Box::pin(async move {
            let user = user.ok_or("log in first")?;
            let stand_in_for = match user.is_admin() {
                false => reads.stands_in_for(&user.username).await.map_err(unavailable)?,
                true => Vec::new(),
            };
            let filter = Filter {
                state: if query.status == "decided" { StateFilter::Decided } else { StateFilter::Only(ApprovalState::Pending) },
                owner_id: (!user.is_admin()).then_some(&user.id),
                decider: (!user.is_admin()).then_some(user.username.as_str()),
                stand_in_for: &stand_in_for,
                tool: query.tool.as_deref().filter(|t| !t.is_empty()),
                username: query.user.as_deref().filter(|t| !t.is_empty()),
                // The page offers only known risks; anything else filters nothing out.
                risk: query.risk.as_deref().and_then(|r| Risk::parse(r).ok()),
                reversibility: query.reversibility.as_deref().and_then(domain::wire::Reversibility::parse),
                order: query.order.as_deref().and_then(QueueOrder::parse).unwrap_or_default(),
                limit: 200,
            };
            let rows = reads.approvals(&filter).await.map_err(unavailable)?;
            let now = now_ms();
            Ok(rows.iter().map(|r| r.to_wire(now)).collect())
        })
    }
}

pub fn data_source(
    page_items: usize,
    policy_version: String,
    sign_in: SignInOptions,
    policy: LivePolicy,
    started_ms: i64,
    reads: Reads,
) -> DataSource {
    DataSource(std::sync::Arc::new(Pages(page_items, policy_version, sign_in, policy, started_ms, reads)))
}
