//! An `INSERT` written as column = value pairs, so a column and the value bound to it sit on one
//! line and cannot drift apart the way a long list of numbered placeholders can.

use anyhow::Context;
use sqlx::{Any, AnyConnection, Arguments, Encode, Type, any::AnyArguments};

pub(super) struct NewRow<'q> {
    table: &'static str,
    columns: Vec<&'static str>,
    values: AnyArguments<'q>,
    /// The first value that failed to encode (reported by `insert`).
    failed: Option<(&'static str, sqlx::error::BoxDynError)>,
}

impl<'q> NewRow<'q> {
    pub(super) fn into(table: &'static str) -> Self {
        Self { table, columns: Vec::new(), values: AnyArguments::default(), failed: None }
    }

    pub(super) fn set<T: 'q + Encode<'q, Any> + Type<Any>>(mut self, column: &'static str, value: T) -> Self {
        if let Err(error) = self.values.add(value) {
            self.failed.get_or_insert((column, error));
        }
        self.columns.push(column);
        self
    }

    fn sql(&self) -> String {
        let placeholders: Vec<String> = (1..=self.columns.len()).map(|n| format!("${n}")).collect();
        format!("INSERT INTO {} ({}) VALUES ({})", self.table, self.columns.join(", "), placeholders.join(", "))
    }

    pub(super) async fn insert(self, conn: &mut AnyConnection) -> anyhow::Result<()> {
        if let Some((column, error)) = self.failed {
            return Err(anyhow::anyhow!("{error}").context(format!("failed to encode {}.{column}", self.table)));
        }
        let sql = self.sql();
        sqlx::query_with(&sql, self.values).execute(conn).await.with_context(|| format!("failed to insert into {}", self.table))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::NewRow;

    #[test]
    fn each_column_gets_the_placeholder_of_its_value() {
        let row = NewRow::into("t").set("a", 1_i64).set("b", "two").set("c", None::<String>);
        assert_eq!(row.sql(), "INSERT INTO t (a, b, c) VALUES ($1, $2, $3)");
    }
}
