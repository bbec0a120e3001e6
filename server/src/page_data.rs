//! What server-side rendering reads: the same store queries the API uses, behind the
//! `PageData` trait the app crate defines.

use app::{
    data::{
        BoxFuture, ChatData, Loaded,
        ssr::{DataSource, PageData},
    },
    domain::{fold, wire::Conversation},
};

use crate::store::{Store, conversations, events};

struct StorePages(Store);

fn unavailable(err: anyhow::Error) -> String {
    tracing::error!(error = ?err, "page data failed");
    "the server could not read its database".into()
}

impl PageData for StorePages {
    fn conversations(&self) -> BoxFuture<Loaded<Vec<Conversation>>> {
        let store = self.0.clone();
        Box::pin(async move { conversations::list(store.pool(), 200).await.map_err(unavailable) })
    }

    fn chat(&self, id: String) -> BoxFuture<Loaded<Option<ChatData>>> {
        let store = self.0.clone();
        Box::pin(async move {
            let Some(conversation) = conversations::get(store.pool(), &id).await.map_err(unavailable)? else { return Ok(None) };
            let events = events::after(store.pool(), &id, 0).await.map_err(unavailable)?;
            Ok(Some(ChatData { conversation, view: fold(&events) }))
        })
    }
}

pub fn data_source(store: Store) -> DataSource {
    DataSource(std::sync::Arc::new(StorePages(store)))
}
