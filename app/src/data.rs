//! Where pages get their data. On the server (SSR) straight from the store, through the
//! `DataSource` the server provides as context; in the browser through the REST API. Either way
//! the resource's value is serialized into the page, so hydration does not fetch it again.

use std::{future::Future, pin::Pin};

use serde::{Deserialize, Serialize};

use crate::domain::{ConversationView, wire::Conversation};

/// What the chat page needs: the conversation and the fold of its events so far.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChatData {
    pub conversation: Conversation,
    pub view: ConversationView,
}

pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
pub type Loaded<T> = Result<T, String>;

#[cfg(feature = "ssr")]
pub mod ssr {
    use std::sync::Arc;

    use super::*;

    /// Implemented by the server over its store.
    pub trait PageData: Send + Sync {
        fn conversations(&self) -> BoxFuture<Loaded<Vec<Conversation>>>;
        fn chat(&self, id: String) -> BoxFuture<Loaded<Option<ChatData>>>;
    }

    #[derive(Clone)]
    pub struct DataSource(pub Arc<dyn PageData>);
}

/// A loader for the conversation list, to hand to a `Resource`.
pub fn conversations_loader() -> impl Fn() -> BoxFuture<Loaded<Vec<Conversation>>> + Clone + Send + Sync + 'static {
    #[cfg(feature = "ssr")]
    {
        let source = leptos::prelude::use_context::<ssr::DataSource>();
        move || match source.clone() {
            Some(source) => source.0.conversations(),
            None => Box::pin(async { Err("no data source".to_owned()) }),
        }
    }
    #[cfg(not(feature = "ssr"))]
    {
        move || -> BoxFuture<Loaded<Vec<Conversation>>> {
            browser(async { crate::client::get::<Vec<Conversation>>("/api/conversations").await.map_err(|e| e.message) })
        }
    }
}

/// A loader for one chat, to hand to a `Resource`. `Ok(None)`: no such conversation.
pub fn chat_loader() -> impl Fn(String) -> BoxFuture<Loaded<Option<ChatData>>> + Clone + Send + Sync + 'static {
    #[cfg(feature = "ssr")]
    {
        let source = leptos::prelude::use_context::<ssr::DataSource>();
        move |id| match source.clone() {
            Some(source) => source.0.chat(id),
            None => Box::pin(async { Err("no data source".to_owned()) }),
        }
    }
    #[cfg(not(feature = "ssr"))]
    {
        move |id: String| -> BoxFuture<Loaded<Option<ChatData>>> {
            browser(async move {
                match crate::client::get::<crate::domain::wire::ConversationDetail>(&format!("/api/conversations/{id}")).await {
                    Ok(detail) => Ok(Some(ChatData { conversation: detail.conversation, view: detail.view })),
                    Err(e) if e.status == 404 => Ok(None),
                    Err(e) => Err(e.message),
                }
            })
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
