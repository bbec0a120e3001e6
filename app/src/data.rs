//! Where pages get their data. On the server (SSR) straight from the store, through the
//! `DataSource` the server provides as context; in the browser through the REST API. Either way
//! the resource's value is serialized into the page, so hydration does not fetch it again.

use crate::domain::ConversationId;
use std::{future::Future, pin::Pin};

use serde::{Deserialize, Serialize};

use crate::domain::{
    ConversationView,
    wire::{Approval, Conversation, LivePolicy, Me, SignInOptions},
};
use crate::queue_query::QueueQuery;

/// What the chat page needs: the conversation and the fold of its events so far.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChatData {
    pub conversation: Conversation,
    pub view: ConversationView,
    /// Whether the person looking is an admin (who may decide calls handed to the admins).
    pub viewer_is_admin: bool,
    /// Whether the person looking owns the chat, so asked for its calls (four-eyes gates keep
    /// them from approving).
    pub viewer_is_owner: bool,
    /// Who is looking (a gate's approvers and a quorum are per person).
    #[serde(default)]
    pub viewer_name: String,
    /// The people the viewer decides in place of (delegations in force).
    #[serde(default)]
    pub stands_in_for: Vec<String>,
    /// The version of the agent configuration in force.
    #[serde(default)]
    pub policy_version: String,
}

pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
pub type Loaded<T> = Result<T, String>;

#[cfg(feature = "ssr")]
pub mod ssr {
    use std::sync::Arc;

    use super::*;

    pub use http::request::Parts;

    /// Implemented by the server over its store. `parts` is the page request: who is asking.
    pub trait PageData: Send + Sync {
        fn me(&self, parts: &Parts) -> Option<Me>;
        /// The configuration in force and the draft in shadow with its hits so far, for an admin
        /// only (`None` for anyone else).
        fn policy(&self, parts: &Parts) -> BoxFuture<Loaded<Option<LivePolicy>>>;
        fn sign_in_options(&self) -> SignInOptions;
        fn conversations(&self, parts: &Parts) -> BoxFuture<Loaded<Vec<Conversation>>>;
        fn chat(&self, parts: &Parts, id: ConversationId) -> BoxFuture<Loaded<Option<ChatData>>>;
        fn approvals(&self, parts: &Parts, query: QueueQuery) -> BoxFuture<Loaded<Vec<Approval>>>;
    }

    /// The data source and the request, as SSR loaders need them.
    pub(crate) fn context() -> Option<(DataSource, Parts)> {
        Some((leptos::prelude::use_context::<DataSource>()?, leptos::prelude::use_context::<Parts>()?))
    }

    pub(crate) fn missing<T: Send + 'static>() -> BoxFuture<Loaded<T>> {
        Box::pin(async { Err("no data source".to_owned()) })
    }

    pub(crate) fn nothing<T: Send + 'static>() -> BoxFuture<Loaded<Option<T>>> {
        Box::pin(async { Ok(None) })
    }

    #[derive(Clone)]
    pub struct DataSource(pub Arc<dyn PageData>);
}

/// The logged-in user (None: anonymous), to hand to a `Resource`.
pub fn me_loader() -> impl Fn() -> BoxFuture<Loaded<Option<Me>>> + Clone + Send + Sync + 'static {
    #[cfg(feature = "ssr")]
    {
        let me = ssr::context().and_then(|(source, parts)| source.0.me(&parts));
        move || -> BoxFuture<Loaded<Option<Me>>> {
            let me = me.clone();
            Box::pin(async move { Ok(me) })
        }
    }
    #[cfg(not(feature = "ssr"))]
    {
        move || -> BoxFuture<Loaded<Option<Me>>> {
            browser(async {
                match crate::api::me().await {
                    Ok(me) => Ok(Some(me)),
                    Err(e) if e.status == 401 => Ok(None),
                    Err(e) => Err(e.message),
                }
            })
        }
    }
}

/// The configuration in force for the Policy page, to hand to a `Resource`: `None` when the viewer
/// is not an admin, and then nothing else is asked (in the browser: no request the server would
/// refuse).
pub fn policy_loader() -> impl Fn() -> BoxFuture<Loaded<Option<LivePolicy>>> + Clone + Send + Sync + 'static {
    #[cfg(feature = "ssr")]
    {
        let context = ssr::context();
        move || match context.clone() {
            Some((source, parts)) => source.0.policy(&parts),
            None => ssr::nothing(),
        }
    }
    #[cfg(not(feature = "ssr"))]
    {
        move || -> BoxFuture<Loaded<Option<LivePolicy>>> {
            browser(async {
                let me = crate::api::me().await.map_err(|e| e.message)?;
                if me.role != crate::domain::Role::Admin {
                    return Ok(None);
                }
                crate::api::live_policy().await.map(Some).map_err(|e| e.message)
            })
        }
    }
}

/// How people may log in here, to hand to a `Resource`.
pub fn sign_in_loader() -> impl Fn() -> BoxFuture<Loaded<SignInOptions>> + Clone + Send + Sync + 'static {
    #[cfg(feature = "ssr")]
    {
        let options = ssr::context().map(|(source, _)| source.0.sign_in_options());
        move || -> BoxFuture<Loaded<SignInOptions>> {
            let options = options.clone();
            Box::pin(async move { options.ok_or_else(|| "no data source".to_owned()) })
        }
    }
    #[cfg(not(feature = "ssr"))]
    {
        move || -> BoxFuture<Loaded<SignInOptions>> { browser(async { crate::api::sign_in_options().await.map_err(|e| e.message) }) }
    }
}

/// A loader for the conversation list, to hand to a `Resource`.
pub fn conversations_loader() -> impl Fn() -> BoxFuture<Loaded<Vec<Conversation>>> + Clone + Send + Sync + 'static {
    #[cfg(feature = "ssr")]
    {
        let context = ssr::context();
        move || match context.clone() {
            Some((source, parts)) => source.0.conversations(&parts),
            None => ssr::missing(),
        }
    }
    #[cfg(not(feature = "ssr"))]
    {
        move || -> BoxFuture<Loaded<Vec<Conversation>>> { browser(async { crate::api::conversations().await.map_err(|e| e.message) }) }
    }
}

/// A loader for one chat, to hand to a `Resource`. `Ok(None)`: no such conversation (or not yours).
pub fn chat_loader() -> impl Fn(ConversationId) -> BoxFuture<Loaded<Option<ChatData>>> + Clone + Send + Sync + 'static {
    #[cfg(feature = "ssr")]
    {
        let context = ssr::context();
        move |id| match context.clone() {
            Some((source, parts)) => source.0.chat(&parts, id),
            None => ssr::missing(),
        }
    }
    #[cfg(not(feature = "ssr"))]
    {
        move |id: ConversationId| -> BoxFuture<Loaded<Option<ChatData>>> {
            browser(async move {
                let detail = crate::api::conversation(&id).await;
                match detail {
                    Ok(detail) => {
                        let me = crate::api::me().await.map_err(|e| e.message)?;
                        Ok(Some(ChatData {
                            viewer_is_owner: detail.conversation.owner_id.as_ref() == Some(&me.id),
                            conversation: detail.conversation,
                            view: detail.view,
                            viewer_is_admin: me.role == crate::domain::Role::Admin,
                            viewer_name: me.username,
                            stands_in_for: me.stands_in_for,
                            policy_version: detail.policy_version,
                        }))
                    }
                    Err(e) if e.status == 404 => Ok(None),
                    Err(e) => Err(e.message),
                }
            })
        }
    }
}

/// A loader for the approval queue, to hand to a `Resource`.
pub fn approvals_loader() -> impl Fn(QueueQuery) -> BoxFuture<Loaded<Vec<Approval>>> + Clone + Send + Sync + 'static {
    #[cfg(feature = "ssr")]
    {
        let context = ssr::context();
        move |query| match context.clone() {
            Some((source, parts)) => source.0.approvals(&parts, query),
            None => ssr::missing(),
        }
    }
    #[cfg(not(feature = "ssr"))]
    {
        move |query: QueueQuery| -> BoxFuture<Loaded<Vec<Approval>>> {
            browser(async move { crate::api::approvals(&query).await.map_err(|e| e.message) })
        }
    }
}

/// Browser futures are not `Send`; the browser has one thread, so wrapping them is sound.
#[cfg(all(feature = "hydrate", not(feature = "ssr")))]
fn browser<T: 'static>(fut: impl Future<Output = T> + 'static) -> BoxFuture<T> {
    Box::pin(send_wrapper::SendWrapper::new(fut))
}

#[cfg(not(any(feature = "hydrate", feature = "ssr")))]
fn browser<T: 'static>(_fut: impl Future<Output = T> + 'static) -> BoxFuture<T> {
    unreachable!("the app is built with the ssr or the hydrate feature")
}
