//! Columns decoded strictly when their row is read. A stored JSON value that does not parse, or
//! a flag that is neither 0 nor 1, fails the read with an error naming the column (and the query
//! names the row or the rows it read), never a silent default that would, say, run a call with
//! `null` arguments or drop an approver from a quorum.

use domain::{
    rules::Approvers,
    wire::{ApprovalContext, RiskAssessment},
};
use serde_json::Value;

/// A JSON column (`TEXT NOT NULL`), as read.
#[derive(sqlx::Type)]
#[sqlx(transparent)]
pub struct JsonText(String);

/// A nullable JSON column, as read.
#[derive(sqlx::Type)]
#[sqlx(transparent)]
pub struct NullableJsonText(Option<String>);

/// A flag: `INTEGER` 0 or 1 in both schemas (SQLite has no boolean type), read as a `bool`.
#[derive(sqlx::Type)]
#[sqlx(transparent)]
pub struct Bit(i64);

impl TryFrom<Bit> for bool {
    type Error = String;

    fn try_from(Bit(value): Bit) -> Result<Self, String> {
        match value {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(format!("{other} is not a flag (0 or 1)")),
        }
    }
}

fn parse<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
    serde_json::from_str(text).map_err(|err| {
        let shown: String = text.chars().take(60).collect();
        format!("the stored value {shown:?} is not what it should be: {err}")
    })
}

/// The JSON columns' types (a blanket impl over every `T` is not allowed for a foreign trait).
macro_rules! json_columns {
    ($($t:ty),* $(,)?) => {$(
        impl TryFrom<JsonText> for $t {
            type Error = String;
            fn try_from(JsonText(text): JsonText) -> Result<Self, String> {
                parse(&text)
            }
        }
        impl TryFrom<NullableJsonText> for Option<$t> {
            type Error = String;
            fn try_from(NullableJsonText(text): NullableJsonText) -> Result<Self, String> {
                text.as_deref().map(parse).transpose()
            }
        }
    )*};
}

json_columns!(Value, Vec<String>, Vec<(String, String)>, ApprovalContext, RiskAssessment, Approvers);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_value_is_an_error_never_a_default() {
        assert_eq!(Value::try_from(JsonText(r#"{"a":1}"#.into())), Ok(serde_json::json!({ "a": 1 })));
        let err = Value::try_from(JsonText("{not json".into())).unwrap_err();
        assert!(err.contains("{not json"), "{err}");
        assert!(Vec::<String>::try_from(JsonText("{}".into())).is_err(), "an object is not a list");
        assert_eq!(Option::<Value>::try_from(NullableJsonText(None)), Ok(None));
        assert!(Option::<Approvers>::try_from(NullableJsonText(Some("[1]".into()))).is_err());
        assert_eq!(bool::try_from(Bit(1)), Ok(true));
        assert_eq!(bool::try_from(Bit(0)), Ok(false));
        assert!(bool::try_from(Bit(2)).is_err());
    }
}
