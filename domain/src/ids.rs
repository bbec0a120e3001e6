//! The ids of the domain's things, one type each, so a task id cannot be passed where a
//! conversation id is meant: the compiler keeps them apart from the store to the UI. On the wire
//! and in the database they are plain strings (serde- and sqlx-transparent).

use std::{borrow::Borrow, fmt, ops::Deref};

use serde::{Deserialize, Serialize};

macro_rules! id_type {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        #[serde(transparent)]
        #[cfg_attr(feature = "sqlx", derive(sqlx::Type), sqlx(transparent))]
        pub struct $name(String);

        impl $name {
            pub fn new(id: impl Into<String>) -> Self {
                Self(id.into())
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }

            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        /// Reading: an id is text (to bind it, format it, put it in a URL). The other way round
        /// is explicit (`new`, `From`), which is where the types do their work.
        impl Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl From<String> for $name {
            fn from(id: String) -> Self {
                Self(id)
            }
        }

        impl From<&str> for $name {
            fn from(id: &str) -> Self {
                Self(id.to_owned())
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> Self {
                id.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }
    )*};
}

id_type! {
    /// A conversation (a chat): the unit of ordering of the event log.
    ConversationId;
    /// One turn of the agent in a conversation, driven by one lease holder at a time.
    TaskId;
    /// A tool call the model proposed, scoped to its task (providers reuse their own call ids).
    CallId;
    /// A request for a human decision on one call.
    ApprovalId;
    /// An account.
    UserId;
    /// A standing permission ("always allow") of a conversation.
    GrantId;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_plain_strings_on_the_wire() {
        let id = TaskId::new("t-1");
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"t-1\"");
        assert_eq!(serde_json::from_str::<TaskId>("\"t-1\"").unwrap(), id);
        assert_eq!(id, "t-1");
        assert_eq!(id.to_string(), "t-1");
        assert_eq!(String::from(id), "t-1");
    }
}
