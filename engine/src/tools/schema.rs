//! JSON Schema validation of tool arguments (model-proposed and human-edited alike).

use std::{
    collections::HashMap,
    sync::{Arc, LazyLock},
};

use domain::wire::FieldProblem;
use parking_lot::Mutex;
use serde_json::Value;

/// Compiled validators by their schema's text. Compiling one cost more than checking a call with
/// it, and every proposed call was checked (docs/performance-notes.md, "The runtime"). Tools'
/// schemas are few; the cache starts over should it ever hold more than this many.
const CACHED_SCHEMAS: usize = 1024;
static VALIDATORS: LazyLock<Mutex<HashMap<String, Arc<jsonschema::Validator>>>> = LazyLock::new(Default::default);

/// Every violation (`/amount`: "must be more than 0"). Empty when valid.
pub fn violations(schema: &Value, args: &Value) -> Vec<FieldProblem> {
    let validator = match validator_for(schema) {
        Ok(v) => v,
        Err(err) => return vec![FieldProblem::new("", format!("the tool's schema is invalid: {err}"))],
    };
    validator.iter_errors(args).map(|e| FieldProblem::new(e.instance_path().to_string(), plain(&e))).collect()
}

/// A violation said for the person who edited the value ("must be more than 0"), not in the
/// validator's words ("-5.0 is less than or equal to the minimum of 0").
fn plain(error: &jsonschema::ValidationError<'_>) -> String {
    use jsonschema::error::{TypeKind, ValidationErrorKind as Kind};
    match error.kind() {
        Kind::ExclusiveMinimum { limit } => format!("must be more than {limit}"),
        Kind::Minimum { limit } => format!("must be at least {limit}"),
        Kind::ExclusiveMaximum { limit } => format!("must be less than {limit}"),
        Kind::Maximum { limit } => format!("must be at most {limit}"),
        Kind::MinLength { limit } => format!("must be at least {limit} characters long"),
        Kind::MaxLength { limit } => format!("must be at most {limit} characters long"),
        Kind::Required { property } => format!("{} is required", property.as_str().unwrap_or("a value")),
        Kind::AdditionalProperties { unexpected } => format!("unknown argument: {}", unexpected.join(", ")),
        Kind::Enum { options } => format!("must be one of {options}"),
        Kind::Type { kind: TypeKind::Single(t) } => {
            format!("must be a{} {t}", if matches!(t.as_str(), "array" | "integer" | "object") { "n" } else { "" })
        }
        _ => error.to_string(),
    }
}

fn validator_for(schema: &Value) -> Result<Arc<jsonschema::Validator>, String> {
    let key = schema.to_string();
    if let Some(validator) = VALIDATORS.lock().get(&key) {
        return Ok(Arc::clone(validator));
    }
    let validator = Arc::new(jsonschema::validator_for(schema).map_err(|err| err.to_string())?);
    let mut cache = VALIDATORS.lock();
    if cache.len() >= CACHED_SCHEMAS {
        cache.clear();
    }
    cache.insert(key, Arc::clone(&validator));
    Ok(validator)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": { "order_id": { "type": "integer" }, "amount": { "type": "number", "exclusiveMinimum": 0 } },
            "required": ["order_id"],
            "additionalProperties": false
        })
    }

    #[test]
    fn valid_arguments_have_no_violations() {
        assert!(violations(&schema(), &json!({"order_id": 1001, "amount": 5})).is_empty());
    }

    #[test]
    fn each_violation_names_its_path() {
        let v = violations(&schema(), &json!({"order_id": "x", "amount": -1}));
        let paths: Vec<&str> = v.iter().map(|e| e.path.as_str()).collect();
        assert!(paths.contains(&"/order_id") && paths.contains(&"/amount"), "{v:?}");
    }

    #[test]
    fn a_missing_required_field_is_a_violation() {
        assert_eq!(violations(&schema(), &json!({})).len(), 1);
    }

    #[test]
    fn violations_are_said_for_people() {
        let said = |args: Value| violations(&schema(), &args).into_iter().map(|v| v.message).collect::<Vec<_>>();
        assert_eq!(said(json!({"order_id": 1001, "amount": -5.0})), ["must be more than 0"]);
        assert_eq!(said(json!({"order_id": "x"})), ["must be an integer"]);
        assert_eq!(said(json!({})), ["order_id is required"]);
        assert_eq!(said(json!({"order_id": 1, "note": "hi"})), ["unknown argument: note"]);
    }

    /// Validators are cached by their schema's text: a second schema gets its own, and an
    /// invalid schema is reported every time (nothing is cached for it).
    #[test]
    fn each_schema_is_checked_by_its_own_validator_and_an_invalid_one_always_says_so() {
        let strings = json!({ "type": "object", "properties": { "order_id": { "type": "string" } } });
        for _ in 0..2 {
            assert!(violations(&schema(), &json!({"order_id": 1001})).is_empty());
            assert_eq!(violations(&strings, &json!({"order_id": 1001})).len(), 1);
            assert!(violations(&strings, &json!({"order_id": "1001"})).is_empty());
            let invalid = violations(&json!({ "type": 12 }), &json!({}));
            assert!(invalid[0].message.starts_with("the tool's schema is invalid"), "{invalid:?}");
        }
    }
}
