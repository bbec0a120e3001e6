//! JSON Schema validation of tool arguments (model-proposed and human-edited alike), and their
//! numbers read as the schema types them.

use std::{
    collections::{BTreeSet, HashMap},
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
    let mut found: Vec<FieldProblem> =
        validator.iter_errors(args).map(|e| FieldProblem::new(e.instance_path().to_string(), plain(&e))).collect();
    found.extend(past_i64(schema, args));
    found
}

/// Whole numbers where the schema types an integer that are too large for one: the validator
/// counts `1e20` and `9223372036854775808` as integers, but tools read integers as `i64`, so
/// such an edit would be decided and then fail in the tool.
fn past_i64(schema: &Value, args: &Value) -> Vec<FieldProblem> {
    integer_places(schema, args)
        .into_iter()
        .filter(|place| args.pointer(place).and_then(Value::as_number).is_some_and(whole_past_i64))
        .map(|place| FieldProblem::new(place, format!("must be an integer from {} to {}", i64::MIN, i64::MAX)))
        .collect()
}

/// Whether a number is whole but no `i64`. A fraction is not: the validator refuses it already.
fn whole_past_i64(n: &serde_json::Number) -> bool {
    match (n.is_i64(), n.is_u64(), n.as_f64()) {
        (true, _, _) => false,
        // Above `i64::MAX`.
        (false, true, _) => true,
        (false, false, f) => f.is_some_and(|f| f.fract() == 0.0 && !I64_RANGE.contains(&f)),
    }
}

/// The floats that are an `i64` when whole: `i64::MIN as f64` and `i64::MAX as f64` are -2^63
/// and 2^63, exactly.
const I64_RANGE: std::ops::Range<f64> = i64::MIN as f64..i64::MAX as f64;

/// `args` with every whole number the schema types as an `integer` written as one: `1004.0`
/// becomes `1004`. Clients that carry JSON as floats (a protobuf `Value`, some models) send
/// `1004.0`, which the schema check counts as an integer but a tool reading an integer does not
/// (docs/api.md, `POST /api/approvals/{id}/approve`). Nothing else changes: a fraction (`1004.5`),
/// a whole number too large for an `i64` (`1e20`) and a string (`"1004"`) stay for [`violations`]
/// to refuse, and a `number` field keeps what it was given. Follows `properties`,
/// `additionalProperties`, `items`, `prefixItems`, `allOf`, `anyOf`, `oneOf` and local `$ref`s
/// (`#/...`), as [`integer_places`] does.
pub fn exact_numbers(schema: &Value, mut args: Value) -> Value {
    for place in integer_places(schema, &args) {
        if let Some(value) = args.pointer_mut(&place)
            && let Some(whole) = value.as_f64().filter(|_| value.is_f64()).and_then(whole_number)
        {
            *value = whole;
        }
    }
    args
}

/// How deep [`integer_places`] follows the schema: a schema whose `$ref`s go round ends here.
const DEEPEST: usize = 64;

/// Where (as JSON pointers) `value` holds a number that `schema` types as an integer only.
fn integer_places(schema: &Value, value: &Value) -> BTreeSet<String> {
    let mut places = BTreeSet::new();
    places_in(schema, schema, value, "", 0, &mut places);
    places
}

fn places_in(root: &Value, schema: &Value, value: &Value, path: &str, depth: usize, places: &mut BTreeSet<String>) {
    // `true` / `false` schemas say nothing of types.
    let Some(schema) = schema.as_object().filter(|_| depth < DEEPEST) else { return };
    if let Some(target) = schema.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix('#')).and_then(|p| root.pointer(p)) {
        places_in(root, target, value, path, depth + 1, places);
    }
    for part in parts(schema) {
        places_in(root, part, value, path, depth + 1, places);
    }
    if value.is_number() && integer_only(schema) {
        places.insert(path.to_owned());
        return;
    }
    match value {
        Value::Object(fields) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            // `additionalProperties` is for names no `properties` (nor `patternProperties`) covers.
            let additional = schema.get("additionalProperties").filter(|_| !schema.contains_key("patternProperties"));
            for (name, field) in fields {
                if let Some(field_schema) = properties.and_then(|p| p.get(name)).or(additional) {
                    let path = format!("{path}/{}", name.replace('~', "~0").replace('/', "~1"));
                    places_in(root, field_schema, field, &path, depth + 1, places);
                }
            }
        }
        Value::Array(items) => {
            let prefix = schema.get("prefixItems").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
            for (i, item) in items.iter().enumerate() {
                let item_schema = match (prefix.get(i), schema.get("items")) {
                    (Some(s), _) => Some(s),
                    // Drafts before 2020-12 write a tuple as an array of `items`.
                    (None, Some(Value::Array(tuple))) => tuple.get(i),
                    (None, rest) => rest,
                };
                if let Some(item_schema) = item_schema {
                    places_in(root, item_schema, item, &format!("{path}/{i}"), depth + 1, places);
                }
            }
        }
        _ => {}
    }
}

/// The subschemas that type the same value as `schema`: each `allOf` part, and each branch of an
/// `anyOf` or `oneOf` none of whose branches takes any number (Pydantic's `Optional[int]` is
/// `anyOf: [{"type": "integer"}, {"type": "null"}]`). Where a branch takes any number, a whole
/// float and a large one fit it as they are.
fn parts(schema: &serde_json::Map<String, Value>) -> impl Iterator<Item = &Value> {
    let all = schema.get("allOf").and_then(Value::as_array).into_iter().flatten();
    let choices = ["anyOf", "oneOf"]
        .into_iter()
        .filter_map(move |keyword| schema.get(keyword).and_then(Value::as_array))
        .filter(|branches| !branches.iter().any(any_number))
        .flatten();
    all.chain(choices)
}

/// Whether a branch takes any number: it types `number`, or it is `true` or `{}`.
fn any_number(branch: &Value) -> bool {
    match branch {
        Value::Bool(takes) => *takes,
        Value::Object(schema) if schema.is_empty() => true,
        Value::Object(schema) => match schema.get("type") {
            Some(Value::String(t)) => t == "number",
            Some(Value::Array(types)) => types.iter().any(|t| t == "number"),
            _ => false,
        },
        _ => false,
    }
}

/// Whether the schema allows integers and no other numbers (`"integer"`, or a list of types with
/// `"integer"` and without `"number"`).
fn integer_only(schema: &serde_json::Map<String, Value>) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(types)) => types.iter().any(|t| t == "integer") && !types.iter().any(|t| t == "number"),
        _ => false,
    }
}

/// The integer a float is exactly, if it is an `i64`: tools read integers as one.
fn whole_number(f: f64) -> Option<Value> {
    (f.fract() == 0.0 && I64_RANGE.contains(&f)).then(|| Value::from(f as i64))
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

    #[test]
    fn a_whole_float_for_an_integer_field_is_that_integer() {
        let args = exact_numbers(&schema(), json!({"order_id": 1004.0, "amount": 2.0}));
        assert!(args["order_id"].is_u64() && args["order_id"] == 1004, "{args}");
        assert!(args["amount"].is_f64() && args["amount"] == 2.0, "a number field keeps its float: {args}");
        assert!(violations(&schema(), &args).is_empty());
        let negative = exact_numbers(&json!({ "type": "integer" }), json!(-3.0));
        assert!(negative.is_i64() && negative == -3, "{negative}");
    }

    #[test]
    fn a_fraction_or_a_string_is_left_for_the_schema_check_to_refuse() {
        let said = |args: Value| violations(&schema(), &exact_numbers(&schema(), args));
        let fraction = said(json!({"order_id": 1004.5}));
        assert_eq!(fraction, [FieldProblem::new("/order_id", "must be an integer")]);
        assert_eq!(exact_numbers(&schema(), json!({"order_id": "1004"})), json!({"order_id": "1004"}));
        assert_eq!(said(json!({"order_id": "1004"})), [FieldProblem::new("/order_id", "must be an integer")]);
        let huge = exact_numbers(&schema(), json!({"order_id": 1e300}));
        assert!(huge["order_id"].is_f64(), "too large for an integer: left as it is: {huge}");
        assert_eq!(violations(&schema(), &huge), [FieldProblem::new("/order_id", TOO_LARGE)], "and then refused");
    }

    const TOO_LARGE: &str = "must be an integer from -9223372036854775808 to 9223372036854775807";

    /// The validator counts any whole number as an integer; tools read integers as `i64`.
    #[test]
    fn a_whole_number_too_large_for_an_i64_is_refused_on_its_field() {
        let checked = |text: &str| {
            let args: Value = serde_json::from_str(&format!(r#"{{"order_id": {text}}}"#)).unwrap();
            violations(&schema(), &exact_numbers(&schema(), args))
        };
        for text in ["1e20", "1e19", "18446744073709551616", "9223372036854775808", "-1e19"] {
            assert_eq!(checked(text), [FieldProblem::new("/order_id", TOO_LARGE)], "{text}");
        }
        for text in ["9223372036854775807", "-9223372036854775808", "9.2e18", "-4.0"] {
            assert!(checked(text).is_empty(), "{text} is an i64");
        }
        let edge = exact_numbers(&schema(), json!({"order_id": 9.2e18}));
        assert!(edge["order_id"].is_i64() && edge["order_id"] == 9_200_000_000_000_000_000_i64, "{edge}");
    }

    #[test]
    fn any_of_and_one_of_are_followed_where_a_branch_types_an_integer() {
        let schema = json!({
            "type": "object",
            "$defs": { "line": { "type": "object", "properties": { "qty": { "type": "integer" } } } },
            "properties": {
                "optional": { "anyOf": [{ "type": "integer" }, { "type": "null" }] },
                "either": { "oneOf": [{ "type": "string" }, { "type": "integer", "minimum": 1 }] },
                "line": { "anyOf": [{ "$ref": "#/$defs/line" }, { "type": "null" }] },
                "loose": { "anyOf": [{ "type": "integer" }, { "type": "number" }] }
            }
        });
        let args = json!({ "optional": 3.0, "either": 4.0, "line": { "qty": 6.0 }, "loose": 5.0 });
        let exact = json!({ "optional": 3, "either": 4, "line": { "qty": 6 }, "loose": 5.0 });
        assert_eq!(exact_numbers(&schema, args), exact);
        assert_eq!(exact_numbers(&schema, json!({ "optional": null, "either": "x" })), json!({ "optional": null, "either": "x" }));
        // A branch that takes any number takes a large one too.
        let huge = violations(&schema, &json!({ "optional": 1e20, "loose": 1e20 }));
        assert_eq!(huge, [FieldProblem::new("/optional", TOO_LARGE)]);
    }

    #[test]
    fn nested_objects_arrays_and_references_are_followed() {
        let schema = json!({
            "type": "object",
            "$defs": { "id": { "type": ["integer", "null"] } },
            "properties": {
                "lines": { "type": "array", "items": {
                    "type": "object", "properties": { "qty": { "type": "integer" }, "price": { "type": "number" } } } },
                "pair": { "type": "array", "prefixItems": [{ "type": "integer" }, { "type": "number" }] },
                "owner": { "$ref": "#/$defs/id" },
                "tags": { "type": "object", "additionalProperties": { "type": "integer" } },
                "loose": {}
            }
        });
        let args = json!({
            "lines": [{ "qty": 2.0, "price": 3.0 }, { "qty": 1.5 }],
            "pair": [7.0, 7.0],
            "owner": 12.0,
            "tags": { "a": 1.0 },
            "loose": 4.0,
            "unknown": 5.0
        });
        // `Value`'s equality tells `2` from `2.0`.
        let exact = json!({
            "lines": [{ "qty": 2, "price": 3.0 }, { "qty": 1.5 }],
            "pair": [7, 7.0],
            "owner": 12,
            "tags": { "a": 1 },
            "loose": 4.0,
            "unknown": 5.0
        });
        assert_eq!(exact_numbers(&schema, args), exact);
        assert_ne!(json!(2), json!(2.0), "the comparison above sees the difference");
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
