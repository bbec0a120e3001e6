//! Editing a call's arguments as a form: one field per property of the tool's JSON Schema (a
//! number field for an amount, a select for an enum, a checkbox for a flag), checked as the
//! reviewer types, and the change shown key by key. Only flat objects of plain values get a form;
//! anything else is edited as JSON. The server validates again with the full schema.

use serde_json::{Map, Value};

#[derive(Clone, Debug, PartialEq)]
pub enum FieldKind {
    Number {
        integer: bool,
    },
    Text,
    Flag,
    /// `enum` of strings.
    Choice(Vec<String>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub name: String,
    pub kind: FieldKind,
    pub required: bool,
    pub description: Option<String>,
    minimum: Option<f64>,
    maximum: Option<f64>,
    exclusive_minimum: Option<f64>,
    exclusive_maximum: Option<f64>,
    min_length: Option<u64>,
    max_length: Option<u64>,
}

impl Field {
    /// Text that may run to paragraphs (over 500 characters allowed): a text area, not a line.
    pub fn long_text(&self) -> bool {
        self.kind == FieldKind::Text && self.max_length.is_some_and(|m| m > 500)
    }
}

/// The form for `schema`, or `None` when it is not a flat object of plain values.
pub fn fields(schema: &Value) -> Option<Vec<Field>> {
    let properties = schema.get("properties")?.as_object()?;
    if properties.is_empty() {
        return None;
    }
    let required: Vec<&str> =
        schema.get("required").and_then(Value::as_array).map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    properties
        .iter()
        .map(|(name, p)| {
            let kind = match (p.get("enum").and_then(Value::as_array), p.get("type").and_then(Value::as_str)) {
                (Some(options), _) => FieldKind::Choice(options.iter().map(|o| o.as_str().map(str::to_owned)).collect::<Option<_>>()?),
                (None, Some("integer")) => FieldKind::Number { integer: true },
                (None, Some("number")) => FieldKind::Number { integer: false },
                (None, Some("string")) => FieldKind::Text,
                (None, Some("boolean")) => FieldKind::Flag,
                _ => return None,
            };
            let number = |key: &str| p.get(key).and_then(Value::as_f64);
            let count = |key: &str| p.get(key).and_then(Value::as_u64);
            Some(Field {
                name: name.clone(),
                kind,
                required: required.contains(&name.as_str()),
                description: p.get("description").and_then(Value::as_str).map(str::to_owned),
                minimum: number("minimum"),
                maximum: number("maximum"),
                exclusive_minimum: number("exclusiveMinimum"),
                exclusive_maximum: number("exclusiveMaximum"),
                min_length: count("minLength"),
                max_length: count("maxLength"),
            })
        })
        .collect()
}

/// The field's value as the input shows it ("" when absent).
pub fn shown(args: &Value, field: &Field) -> String {
    match args.get(&field.name) {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        // A whole number typed as "12" is stored as 12.0: shown again as typed, not as "12.0"
        // (a field drawn again would otherwise turn the next key into "12.03").
        Some(Value::Number(n)) if n.as_f64().is_some_and(|f| f.fract() == 0.0 && f.abs() < 1e15) && !n.is_i64() && !n.is_u64() => {
            format!("{}", n.as_f64().unwrap_or_default() as i64)
        }
        Some(other) => other.to_string(),
    }
}

/// `args` with the field set from what was typed (an empty input removes the key), or why what
/// was typed cannot be that field's value.
pub fn set_field(args: &Value, field: &Field, input: &str) -> Result<Value, String> {
    let mut object: Map<String, Value> = args.as_object().cloned().unwrap_or_default();
    let input = input.trim();
    if input.is_empty() {
        object.remove(&field.name);
        return Ok(Value::Object(object));
    }
    let value = match &field.kind {
        FieldKind::Number { integer: true } => input.parse::<i64>().map(Value::from).map_err(|_| "a whole number".to_owned())?,
        FieldKind::Number { integer: false } => {
            let n: f64 = input.parse().map_err(|_| "a number".to_owned())?;
            serde_json::Number::from_f64(n).map(Value::Number).ok_or_else(|| "a finite number".to_owned())?
        }
        FieldKind::Flag => Value::Bool(input == "true"),
        FieldKind::Text | FieldKind::Choice(_) => Value::String(input.to_owned()),
    };
    object.insert(field.name.clone(), value);
    Ok(Value::Object(object))
}

/// What is wrong with the field's value in `args`, said for the person typing it.
pub fn problem(args: &Value, field: &Field) -> Option<String> {
    let Some(value) = args.get(&field.name).filter(|v| !v.is_null()) else {
        return field.required.then(|| "Required.".to_owned());
    };
    match &field.kind {
        FieldKind::Number { integer } => {
            let Some(n) = value.as_f64() else { return Some("Must be a number.".into()) };
            if *integer && value.as_i64().is_none() {
                return Some("Must be a whole number.".into());
            }
            let out = |bound: Option<f64>, bad: fn(f64, f64) -> bool, words: &str| {
                bound.filter(|b| bad(n, *b)).map(|b| format!("Must be {words} {}.", crate::wording::number(b)))
            };
            out(field.minimum, |n, b| n < b, "at least")
                .or_else(|| out(field.exclusive_minimum, |n, b| n <= b, "more than"))
                .or_else(|| out(field.maximum, |n, b| n > b, "at most"))
                .or_else(|| out(field.exclusive_maximum, |n, b| n >= b, "less than"))
        }
        FieldKind::Text => {
            let Some(s) = value.as_str() else { return Some("Must be text.".into()) };
            let n = s.chars().count() as u64;
            if field.min_length.is_some_and(|m| n < m) {
                return Some(format!("At least {} characters.", field.min_length.unwrap_or_default()));
            }
            field.max_length.filter(|m| n > *m).map(|m| format!("At most {m} characters."))
        }
        FieldKind::Flag => (!value.is_boolean()).then(|| "Must be yes or no.".into()),
        FieldKind::Choice(options) => {
            (!value.as_str().is_some_and(|s| options.iter().any(|o| o == s))).then(|| format!("One of: {}.", options.join(", ")))
        }
    }
}

/// One changed top-level key: its value before and after (`None`: absent).
#[derive(Clone, Debug, PartialEq)]
pub struct KeyChange {
    pub key: String,
    pub before: Option<Value>,
    pub after: Option<Value>,
}

/// The keys whose values differ between `before` and `after`, in key order.
pub fn key_changes(before: &Value, after: &Value) -> Vec<KeyChange> {
    let empty = Map::new();
    let (b, a) = (before.as_object().unwrap_or(&empty), after.as_object().unwrap_or(&empty));
    let mut keys: Vec<&String> = b.keys().chain(a.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| b.get(*k) != a.get(*k))
        .map(|k| KeyChange { key: k.clone(), before: b.get(k).cloned(), after: a.get(k).cloned() })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn refund_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "order_id": { "type": "integer", "minimum": 1, "description": "The order number" },
                "amount": { "type": "number", "exclusiveMinimum": 0 },
                "speed": { "type": "string", "enum": ["normal", "express"] },
                "note": { "type": "string", "maxLength": 5 },
                "notify": { "type": "boolean" }
            },
            "required": ["order_id"]
        })
    }

    fn field(name: &str) -> Field {
        fields(&refund_schema()).unwrap().into_iter().find(|f| f.name == name).unwrap()
    }

    #[test]
    fn a_flat_schema_becomes_one_field_per_property() {
        let form = fields(&refund_schema()).unwrap();
        let kinds: Vec<(&str, &FieldKind, bool)> = form.iter().map(|f| (f.name.as_str(), &f.kind, f.required)).collect();
        assert!(kinds.contains(&("order_id", &FieldKind::Number { integer: true }, true)));
        assert!(kinds.contains(&("amount", &FieldKind::Number { integer: false }, false)));
        assert!(kinds.contains(&("speed", &FieldKind::Choice(vec!["normal".into(), "express".into()]), false)));
        assert!(kinds.contains(&("notify", &FieldKind::Flag, false)));
        assert_eq!(field("order_id").description.as_deref(), Some("The order number"));
    }

    #[test]
    fn nested_or_untyped_schemas_are_edited_as_json() {
        assert_eq!(fields(&json!({"properties": {"filter": {"type": "object"}}})), None);
        assert_eq!(fields(&json!({"properties": {"x": {}}})), None);
        assert_eq!(fields(&json!({"properties": {"tags": {"type": "array"}}})), None);
        assert_eq!(fields(&json!({"properties": {"level": {"enum": [1, 2]}}})), None);
        assert_eq!(fields(&json!({"type": "object"})), None);
        assert_eq!(fields(&json!({"properties": {}})), None);
    }

    #[test]
    fn typing_sets_or_removes_the_key_and_refuses_what_is_not_a_value() {
        let args = json!({"order_id": 1004});
        assert_eq!(set_field(&args, &field("amount"), "0.5"), Ok(json!({"order_id": 1004, "amount": 0.5})));
        assert_eq!(set_field(&args, &field("order_id"), "1002"), Ok(json!({"order_id": 1002})));
        assert_eq!(set_field(&args, &field("order_id"), ""), Ok(json!({})));
        assert_eq!(set_field(&args, &field("order_id"), "10.5"), Err("a whole number".into()));
        assert_eq!(set_field(&args, &field("amount"), "ten"), Err("a number".into()));
        assert_eq!(set_field(&args, &field("speed"), "express"), Ok(json!({"order_id": 1004, "speed": "express"})));
        assert_eq!(set_field(&args, &field("notify"), "true"), Ok(json!({"order_id": 1004, "notify": true})));
        assert_eq!(set_field(&json!({"note": "x"}), &field("note"), ""), Ok(json!({})));
        assert_eq!(shown(&json!({"amount": 0.5, "note": "hi"}), &field("amount")), "0.5");
        assert_eq!(shown(&json!({"amount": 0.5, "note": "hi"}), &field("note")), "hi");
        assert_eq!(shown(&json!({}), &field("note")), "");
        assert_eq!(shown(&json!({"amount": 12.0}), &field("amount")), "12", "a whole number is shown as typed");
        assert_eq!(shown(&json!({"amount": -3.0}), &field("amount")), "-3");
        assert_eq!(shown(&json!({"amount": 12}), &field("amount")), "12");
    }

    #[test]
    fn problems_are_said_next_to_the_field() {
        assert_eq!(problem(&json!({}), &field("order_id")), Some("Required.".into()));
        assert_eq!(problem(&json!({"order_id": 0}), &field("order_id")), Some("Must be at least 1.".into()));
        assert_eq!(problem(&json!({"order_id": 1.5}), &field("order_id")), Some("Must be a whole number.".into()));
        assert_eq!(problem(&json!({"amount": 0}), &field("amount")), Some("Must be more than 0.".into()));
        assert_eq!(problem(&json!({"amount": "x"}), &field("amount")), Some("Must be a number.".into()));
        assert_eq!(problem(&json!({"speed": "slow"}), &field("speed")), Some("One of: normal, express.".into()));
        assert_eq!(problem(&json!({"note": "toolong"}), &field("note")), Some("At most 5 characters.".into()));
        assert_eq!(problem(&json!({"notify": "yes"}), &field("notify")), Some("Must be yes or no.".into()));
        assert_eq!(problem(&json!({"order_id": 1004, "amount": 0.5}), &field("amount")), None);
        assert_eq!(problem(&json!({}), &field("amount")), None);
    }

    #[test]
    fn the_diff_is_by_key() {
        let changes = key_changes(&json!({"order_id": 1004}), &json!({"order_id": 1004, "amount": 0.5}));
        assert_eq!(changes, [KeyChange { key: "amount".into(), before: None, after: Some(json!(0.5)) }]);
        let changes = key_changes(&json!({"a": 1, "b": 2}), &json!({"a": 3}));
        assert_eq!(
            changes,
            [
                KeyChange { key: "a".into(), before: Some(json!(1)), after: Some(json!(3)) },
                KeyChange { key: "b".into(), before: Some(json!(2)), after: None }
            ]
        );
        assert!(key_changes(&json!({"a": 1}), &json!({"a": 1})).is_empty());
    }
}
