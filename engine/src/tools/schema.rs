//! JSON Schema validation of tool arguments (model-proposed and human-edited alike).

use serde_json::{Value, json};

/// Every violation, as `{"path": "/amount", "message": "…"}` objects. Empty when valid.
pub fn violations(schema: &Value, args: &Value) -> Vec<Value> {
    let validator = match jsonschema::validator_for(schema) {
        Ok(v) => v,
        Err(err) => return vec![json!({ "path": "", "message": format!("the tool's schema is invalid: {err}") })],
    };
    validator.iter_errors(args).map(|e| json!({ "path": e.instance_path().to_string(), "message": e.to_string() })).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let paths: Vec<&str> = v.iter().map(|e| e["path"].as_str().unwrap()).collect();
        assert!(paths.contains(&"/order_id") && paths.contains(&"/amount"), "{v:?}");
    }

    #[test]
    fn a_missing_required_field_is_a_violation() {
        assert_eq!(violations(&schema(), &json!({})).len(), 1);
    }
}
